package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The Kubeflow Spark Operator on a simulated node. Its chart goes in without replicas, and the
// one container of each of its Deployments, the controller and the webhook, runs as a process
// of this machine, as runHooksOnHost runs sparkhooks': the release's binary with the chart's
// arguments, listeners moved to free ports, and what a Pod gets from the cluster told instead:
// the admin kubeconfig, the API server's address (the controller's spark-submit masters on
// KUBERNETES_SERVICE_HOST and _PORT), and the Spark distribution and Java of the operator's image.
// The webhook's port goes into an EndpointSlice of its Service, through which kube-apiserver calls
// it. Its spark-submit JVMs are the controller's children, so their CPU is the controller's
// children's.

// kubeflowWebhookPort is the argument giving the webhook's serving port.
const kubeflowWebhookPort = "--webhook-port="

func (s *Stack) runKubeflowOnHost(ctx context.Context, k *KubeflowOperator) error {
	client, err := kubernetes.NewForConfig(s.Admin)
	if err != nil {
		return err
	}
	deployments, err := client.AppsV1().Deployments(KubeflowNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("reading the Kubeflow Spark Operator's Deployments: %w", err)
	}
	host, port, err := net.SplitHostPort(s.APIAddress)
	if err != nil {
		return fmt.Errorf("the API server's address: %w", err)
	}
	certs := filepath.Join(s.options.Dir, "kubeflow", "webhook-certs")
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return err
	}
	for _, d := range deployments.Items {
		if err := s.runKubeflowDeploymentOnHost(ctx, client, k, d, []string{
			"KUBERNETES_SERVICE_HOST=" + host, "KUBERNETES_SERVICE_PORT=" + port, "KUBECONFIG=" + s.Kubeconfig,
			"SPARK_HOME=" + k.SparkHome, "JAVA_HOME=" + k.JavaHome,
			"PATH=" + filepath.Join(k.JavaHome, "bin") + ":" + filepath.Join(k.SparkHome, "bin") + ":" + os.Getenv("PATH"),
		}, certs); err != nil {
			return err
		}
	}
	if len(s.kubeflowOnHost) == 0 {
		return errors.New("the Kubeflow Spark Operator's chart installed no Deployment")
	}
	return nil
}

func (s *Stack) runKubeflowDeploymentOnHost(ctx context.Context, client kubernetes.Interface, k *KubeflowOperator, d appsv1.Deployment, hostEnv []string, certs string) error {
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 || len(spec.Containers[0].Command) > 0 {
		return fmt.Errorf("Deployment %s must have one container running the image's entrypoint for a host process to stand in for it", d.Name)
	}
	c := spec.Containers[0]
	args, hostPorts, err := kubeflowHostArgs(c.Args, c.Ports, s.NodeIP, func() (int, error) { return freePort(s.NodeIP.String()) })
	if err != nil {
		return fmt.Errorf("Deployment %s: %w", d.Name, err)
	}
	probe, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	probeAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(probe))
	args = append(args, "--kubeconfig="+s.Kubeconfig, "--health-probe-bind-address="+probeAddr)
	webhook := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, kubeflowWebhookPort) })
	if webhook {
		args = append(args, "--webhook-cert-dir="+certs)
	}
	env, err := containerEnv(c)
	if err != nil {
		return err
	}
	proc, err := startComponent(d.Name, "the Kubeflow Spark Operator's "+d.Name, k.Binary, args, append(env, hostEnv...), s.LogDir)
	if err != nil {
		return err
	}
	s.kubeflowOnHost = append(s.kubeflowOnHost, proc)
	if err := proc.current().waitFor(ctx, d.Name+"'s readiness", func(ctx context.Context) error {
		return httpOK(ctx, "http://"+probeAddr+"/readyz")
	}); err != nil {
		return err
	}
	if !webhook {
		return nil
	}
	services, err := client.CoreV1().Services(KubeflowNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, svc := range services.Items {
		if !labelsMatch(svc.Spec.Selector, d.Spec.Template.Labels) {
			continue
		}
		if err := publishHostEndpoints(ctx, client, KubeflowNamespace, svc.Name, c, hostPorts, s.NodeIP, s.options.NodeName); err != nil {
			return err
		}
		// The webhook writes its CA into the chart's webhook configurations after it is ready:
		// until then kube-apiserver refuses its certificate, and every SparkApplication with it.
		if err := s.poll(ctx, "the Kubeflow webhook's CA in its configurations", func(ctx context.Context) error {
			return caBundlesSet(ctx, client, svc.Name)
		}); err != nil {
			return err
		}
	}
	return nil
}

// caBundlesSet fails while a webhook calling service has no CA bundle.
func caBundlesSet(ctx context.Context, client kubernetes.Interface, service string) error {
	mutating, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	validating, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var configs []admissionregistrationv1.WebhookClientConfig
	for _, c := range mutating.Items {
		for _, w := range c.Webhooks {
			configs = append(configs, w.ClientConfig)
		}
	}
	for _, c := range validating.Items {
		for _, w := range c.Webhooks {
			configs = append(configs, w.ClientConfig)
		}
	}
	for _, c := range configs {
		if c.Service != nil && c.Service.Namespace == KubeflowNamespace && c.Service.Name == service && len(c.CABundle) == 0 {
			return fmt.Errorf("a webhook calling Service %s has no CA bundle yet", service)
		}
	}
	return nil
}

// kubeflowHostArgs moves the container's listeners to free ports of ip: its listen addresses
// (moveListenAddress) and the webhook's port, which the operator takes as a number. It returns
// the arguments and each container port's host port.
func kubeflowHostArgs(containerArgs []string, ports []corev1.ContainerPort, ip netip.Addr, free func() (int, error)) ([]string, map[int32]int32, error) {
	args := slices.Clone(containerArgs)
	hostPorts := map[int32]int32{}
	for _, p := range ports {
		port, err := free()
		if err != nil {
			return nil, nil, err
		}
		to := netip.AddrPortFrom(ip, uint16(port))
		moved := false
		for i := range args {
			if arg, ok := moveListenAddress(args[i], p.ContainerPort, to); ok {
				args[i], moved = arg, true
			}
			if args[i] == kubeflowWebhookPort+strconv.Itoa(int(p.ContainerPort)) {
				args[i], moved = kubeflowWebhookPort+strconv.Itoa(port), true
			}
		}
		if !moved {
			return nil, nil, fmt.Errorf("no argument listens at its port %d (%s): the host process cannot be moved off it", p.ContainerPort, p.Name)
		}
		hostPorts[p.ContainerPort] = int32(port)
	}
	return args, hostPorts, nil
}

// labelsMatch says whether a Service's selector selects a Pod with labels.
func labelsMatch(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
