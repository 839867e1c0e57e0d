package sparkctl

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/portforward"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

var servicesGVR = corev1.SchemeGroupVersion.WithResource("services")

// uiPortName is the name Spark gives the driver container's UI port.
const uiPortName = "spark-ui"

// uiTarget is where kubectl spark ui takes the user: a pod's port, reached through a
// port-forward, or a URL the user's browser reaches directly.
type uiTarget struct {
	what string      // for the user: "Live Spark UI of ..." or "History Server page of ..."
	pod  *corev1.Pod // nil when url is reached directly
	port int         // the pod's port
	path string      // the page on the forwarded port
	url  string      // the page, when pod is nil
}

func (c *cli) uiCmd() *cobra.Command {
	var (
		addresses []string
		local     int
		open      bool
	)
	cmd := &cobra.Command{
		Use:   "ui NAME",
		Short: "Show the application's Spark UI: live while the driver runs, then the History Server's page",
		Long: `Print a local URL of the application's Spark UI and forward it until interrupted.
While the driver runs, that is the driver's own UI, through a port-forward to its pod.
Once the driver is gone, it is the application's page on the History Server
(status.historyURL): through a port-forward to the History Server's pod when the URL is
a Service's in-cluster address, else the URL itself. --open opens it in a browser.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, name, err := parseRef(args[0], kindSparkApp)
			if err != nil {
				return err
			}
			if local < 0 || local > 65535 {
				return usageErrorf("--port %d: want a port between 0 and 65535", local)
			}
			cl, err := c.connect()
			if err != nil {
				return err
			}
			app, err := getSparkApp(cmd.Context(), cl, cl.Namespace, name)
			if err != nil {
				return err
			}
			target, err := resolveUI(cmd.Context(), cl, app)
			if err != nil {
				return err
			}
			show := func(u string) error {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", target.what, u)
				if open {
					if err := c.env.OpenURL(u); err != nil {
						return fmt.Errorf("opening %s: %w", u, err)
					}
				}
				return nil
			}
			if target.pod == nil {
				return show(target.url)
			}
			return c.forward(cmd.Context(), cl, target.pod, addresses, local, target.port, cmd, func(ports []portforward.ForwardedPort) {
				if len(ports) == 0 {
					return
				}
				host := "localhost"
				if len(addresses) > 0 && addresses[0] != "localhost" {
					host = addresses[0]
				}
				u := "http://" + net.JoinHostPort(host, strconv.Itoa(int(ports[0].Local))) + target.path
				if err := show(u); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "error:", err)
				}
			})
		},
	}
	cmd.Flags().StringSliceVar(&addresses, "address", []string{"localhost"}, "local addresses to listen on")
	cmd.Flags().IntVar(&local, "port", 0, "local port (0: a free one)")
	cmd.Flags().BoolVar(&open, "open", false, "open the page in a browser")
	return cmd
}

// resolveUI decides where the application's UI is: the running driver's, else its History
// Server page.
func resolveUI(ctx context.Context, cl *Clients, app *v1beta2.SparkApplication) (uiTarget, error) {
	driverPod, err := getPodObject(ctx, cl, app.Namespace, driverPodName(app))
	switch {
	case err == nil && driverPod.Status.Phase == corev1.PodRunning:
		port := namedContainerPort(driverPod, uiPortName)
		if port == 0 {
			port = sparkUIPort
		}
		return uiTarget{what: "Live Spark UI of " + app.Name, pod: driverPod, port: port, path: "/"}, nil
	case err != nil && !apierrors.IsNotFound(err):
		return uiTarget{}, fmt.Errorf("reading driver pod %s: %w", driverPodName(app), err)
	}
	history := app.Status.HistoryURL
	if history == "" {
		return uiTarget{}, fmt.Errorf("SparkApplication %q has no running driver and no History Server page (status.historyURL): the operator has no History Server, or the application logs its events elsewhere", app.Name)
	}
	what := "History Server page of " + app.Name
	u, err := url.Parse(history)
	if err != nil {
		return uiTarget{}, fmt.Errorf("status.historyURL %q: %w", history, err)
	}
	svcName, svcNamespace, ok := inClusterService(u.Hostname())
	if !ok {
		return uiTarget{what: what, url: history}, nil
	}
	port := 80
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return uiTarget{}, fmt.Errorf("status.historyURL %q: port %q", history, p)
		}
	}
	pod, podPort, err := serviceBackend(ctx, cl, svcNamespace, svcName, port)
	if err != nil {
		return uiTarget{}, fmt.Errorf("the History Server of %s (%s): %w", app.Name, history, err)
	}
	path := u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return uiTarget{what: what, pod: pod, port: podPort, path: path}, nil
}

// inClusterService reads NAME.NAMESPACE.svc[.cluster domain], the DNS name of a Service, which
// only resolves inside the cluster.
func inClusterService(host string) (name, namespace string, ok bool) {
	parts := strings.Split(host, ".")
	if len(parts) < 3 || parts[2] != "svc" || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// serviceBackend is a ready pod behind a Service's port and the pod's port it targets: a
// port-forward reaches pods, not Services, as kubectl port-forward service/NAME also resolves.
func serviceBackend(ctx context.Context, cl *Clients, namespace, name string, port int) (*corev1.Pod, int, error) {
	obj, err := cl.Dynamic.Resource(servicesGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("reading service %s/%s: %w", namespace, name, err)
	}
	svc, err := typed[corev1.Service](obj)
	if err != nil {
		return nil, 0, err
	}
	var target *intstr.IntOrString
	for _, p := range svc.Spec.Ports {
		if int(p.Port) == port {
			target = &p.TargetPort
		}
	}
	if target == nil {
		return nil, 0, fmt.Errorf("service %s/%s has no port %d", namespace, name, port)
	}
	if len(svc.Spec.Selector) == 0 {
		return nil, 0, fmt.Errorf("service %s/%s selects no pods", namespace, name)
	}
	pods, err := listPods(ctx, cl, namespace, labels.SelectorFromSet(svc.Spec.Selector).String())
	if err != nil {
		return nil, 0, fmt.Errorf("listing the pods of service %s/%s: %w", namespace, name, err)
	}
	for i := range pods {
		pod := &pods[i]
		if pod.Status.Phase != corev1.PodRunning || !isReady(pod) {
			continue
		}
		switch {
		case target.Type == intstr.String && target.StrVal != "":
			if p := namedContainerPort(pod, target.StrVal); p != 0 {
				return pod, p, nil
			}
		case target.IntVal != 0:
			return pod, int(target.IntVal), nil
		default:
			return pod, port, nil
		}
	}
	return nil, 0, errors.New("no ready pod behind service " + namespace + "/" + name)
}

func isReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func namedContainerPort(pod *corev1.Pod, name string) int {
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return int(p.ContainerPort)
			}
		}
	}
	return 0
}

// openBrowser opens a URL with the desktop's handler.
func openBrowser(u string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	return cmd.Start()
}
