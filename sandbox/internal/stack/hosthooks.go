package stack

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// The hook server on a simulated node. No kubelet runs the chart's Deployment there (the chart
// goes in with replicaCount=0), so the stack runs the one container of its Pod template as a
// process of this machine, as a container runtime would with the container's ports published:
// the image's entrypoint (the sparkhooks binary) with the arguments and environment the chart
// gives it, its Secret and ConfigMap volumes copied into a directory, its listen addresses moved
// to free ports of the node's address. That address goes into an EndpointSlice of the chart's
// Service, so kube-apiserver calls both admission webhooks through the Service (it reads only
// EndpointSlices to resolve a webhook's Service: k8s.io/apiserver v0.36's proxy.ResolveEndpoint,
// which kube-apiserver v1.36 uses with --enable-aggregator-routing), and the stand-in calls the
// hooks through it, as in a cluster. Nothing of the chart is re-typed here: a chart that gives
// the server other arguments, files or ports gives them to the host process too.

const (
	// hookRelease is the chart's release, which names its Deployment and Service.
	hookRelease = "sparkhooks"
	// hookPortName is the container port the hooks are served at (the Service's targetPort).
	hookPortName = "http"
	// hostEndpointsManager marks the EndpointSlice of the host process, so that the
	// EndpointSlice controller, which manages only its own, leaves it alone.
	hostEndpointsManager = "sparkhooks-local"
)

// runHooksOnHost starts the host process, waits for its readiness probe and publishes it.
func (s *Stack) runHooksOnHost(ctx context.Context, o Options, client kubernetes.Interface) error {
	deploy, err := client.AppsV1().Deployments(SparkhooksNamespace).Get(ctx, hookRelease, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the chart's Deployment: %w", err)
	}
	spec := deploy.Spec.Template.Spec
	if len(spec.Containers) != 1 || len(spec.Containers[0].Command) > 0 {
		return errors.New("the chart's Deployment must have one container running the image's entrypoint for the host process to stand in for it")
	}
	c := spec.Containers[0]
	args := slices.Clone(c.Args)
	for _, m := range c.VolumeMounts {
		local := filepath.Join(o.Dir, "hooks", m.Name)
		if err := copyVolume(ctx, client, SparkhooksNamespace, spec.Volumes, m.Name, local); err != nil {
			return err
		}
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], strings.TrimSuffix(m.MountPath, "/")+"/", local+"/")
		}
	}
	hostPorts := map[int32]int32{}
	for _, p := range c.Ports {
		free, err := freePort(s.NodeIP.String())
		if err != nil {
			return err
		}
		if p.Name == hookPortName && s.hookHTTPPort != 0 {
			free = s.hookHTTPPort
		}
		to := netip.AddrPortFrom(s.NodeIP, uint16(free))
		moved := false
		for i := range args {
			if arg, ok := moveListenAddress(args[i], p.ContainerPort, to); ok {
				args[i], moved = arg, true
			}
		}
		if !moved {
			return fmt.Errorf("no argument of the chart's container listens at its port %d (%s): the host process cannot be moved off it", p.ContainerPort, p.Name)
		}
		hostPorts[p.ContainerPort] = int32(free)
	}
	env, err := containerEnv(c)
	if err != nil {
		return err
	}
	if s.hooks, err = startComponent("sparkhooks", "sparkhooks serve", o.Sparkhooks, args, env, s.LogDir); err != nil {
		return err
	}
	if probe := c.ReadinessProbe; probe != nil && probe.HTTPGet != nil {
		port, err := containerPort(c, probe.HTTPGet.Port)
		if err != nil {
			return fmt.Errorf("the readiness probe: %w", err)
		}
		url := "http://" + net.JoinHostPort(s.NodeIP.String(), strconv.Itoa(int(hostPorts[port]))) + probe.HTTPGet.Path
		if err := s.hooks.current().waitFor(ctx, "the hook server's readiness", func(ctx context.Context) error { return httpOK(ctx, url) }); err != nil {
			return err
		}
	}
	s.HookServer = s.NodeIP.String()
	return publishHostEndpoints(ctx, client, SparkhooksNamespace, hookRelease, c, hostPorts, s.NodeIP, o.NodeName)
}

// moveListenAddress turns a listen address argument, --<name>addr[ess]=[host]:port, naming the
// container's port on every address, into one naming to; other arguments are left as they are.
func moveListenAddress(arg string, containerPort int32, to netip.AddrPort) (string, bool) {
	flag, value, ok := strings.Cut(arg, "=")
	if !ok || !strings.HasPrefix(flag, "-") || (!strings.HasSuffix(flag, "addr") && !strings.HasSuffix(flag, "address")) {
		return arg, false
	}
	host, port, err := net.SplitHostPort(value)
	if err != nil || port != strconv.Itoa(int(containerPort)) || (host != "" && host != "0.0.0.0" && host != "::") {
		return arg, false
	}
	return flag + "=" + to.String(), true
}

// copyVolume writes the keys of the Secret or ConfigMap behind the named volume as files in dir.
func copyVolume(ctx context.Context, client kubernetes.Interface, namespace string, volumes []corev1.Volume, name, dir string) error {
	i := slices.IndexFunc(volumes, func(v corev1.Volume) bool { return v.Name == name })
	if i < 0 {
		return fmt.Errorf("the chart's Deployment mounts a volume %s it does not declare", name)
	}
	files := map[string][]byte{}
	switch v := volumes[i].VolumeSource; {
	case v.Secret != nil:
		secret, err := client.CoreV1().Secrets(namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("volume %s: %w", name, err)
		}
		files = secret.Data
	case v.ConfigMap != nil:
		cm, err := client.CoreV1().ConfigMaps(namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("volume %s: %w", name, err)
		}
		for key, value := range cm.Data {
			files[key] = []byte(value)
		}
		for key, value := range cm.BinaryData {
			files[key] = value
		}
	default:
		return fmt.Errorf("volume %s: only Secret and ConfigMap volumes can be given to a host process", name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for key, data := range files {
		if err := os.WriteFile(filepath.Join(dir, key), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// containerEnv is the container's environment as a kubelet resolves it, for the variables the
// host process can have: values, and resource fields of the container itself. A resource the
// container sets no quantity for is left out (a kubelet would give the node's allocatable, which
// means nothing to a host process): the server then uses its default.
func containerEnv(c corev1.Container) ([]string, error) {
	var env []string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.ResourceFieldRef != nil:
			value, ok, err := resourceFieldValue(c, e.ValueFrom.ResourceFieldRef)
			if err != nil {
				return nil, fmt.Errorf("env %s: %w", e.Name, err)
			}
			if ok {
				env = append(env, e.Name+"="+value)
			}
		default:
			return nil, fmt.Errorf("env %s: only values and resource fields can be given to a host process", e.Name)
		}
	}
	return env, nil
}

// resourceFieldValue is a limits.* or requests.* field of the container, divided by the divisor
// and rounded up, as the downward API gives it.
func resourceFieldValue(c corev1.Container, ref *corev1.ResourceFieldSelector) (string, bool, error) {
	kind, name, _ := strings.Cut(ref.Resource, ".")
	var list corev1.ResourceList
	switch kind {
	case "limits":
		list = c.Resources.Limits
	case "requests":
		list = c.Resources.Requests
	default:
		return "", false, fmt.Errorf("resource field %q", ref.Resource)
	}
	quantity, ok := list[corev1.ResourceName(name)]
	if !ok {
		return "", false, nil
	}
	divisor := resource.MustParse("1")
	if !ref.Divisor.IsZero() {
		divisor = ref.Divisor
	}
	value := math.Ceil(float64(quantity.MilliValue()) / float64(divisor.MilliValue()))
	return strconv.FormatInt(int64(value), 10), true, nil
}

// containerPort resolves a port by number or by the name of one of the container's ports.
func containerPort(c corev1.Container, port intstr.IntOrString) (int32, error) {
	if port.Type == intstr.Int {
		return port.IntVal, nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return p.ContainerPort, nil
		}
	}
	return 0, fmt.Errorf("the container has no port named %q", port.StrVal)
}

// httpOK gets url and wants a 200.
func httpOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// publishHostEndpoints writes the host process's address as the one ready endpoint of a
// chart's Service, its ports mapped from the Service's target ports, in an EndpointSlice owned
// by the Service, as the EndpointSlice controller writes one for Pods.
func publishHostEndpoints(ctx context.Context, client kubernetes.Interface, namespace, service string, c corev1.Container, hostPorts map[int32]int32, ip netip.Addr, nodeName string) error {
	svc, err := client.CoreV1().Services(namespace).Get(ctx, service, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the chart's Service %s: %w", service, err)
	}
	slice, err := hostEndpointSlice(svc, c, hostPorts, ip, nodeName)
	if err != nil {
		return err
	}
	slices := client.DiscoveryV1().EndpointSlices(svc.Namespace)
	if _, err := slices.Create(ctx, slice, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		// A sandbox started again on its data dir: the old slice names the old ports.
		existing, err := slices.Get(ctx, slice.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		slice.ResourceVersion = existing.ResourceVersion
		_, err = slices.Update(ctx, slice, metav1.UpdateOptions{})
		return err
	} else if err != nil {
		return fmt.Errorf("publishing the host process behind Service %s: %w", service, err)
	}
	return nil
}

func hostEndpointSlice(svc *corev1.Service, c corev1.Container, hostPorts map[int32]int32, ip netip.Addr, nodeName string) (*discoveryv1.EndpointSlice, error) {
	var ports []discoveryv1.EndpointPort
	for _, sp := range svc.Spec.Ports {
		target, err := containerPort(c, sp.TargetPort)
		if err != nil {
			return nil, fmt.Errorf("the Service's port %s: %w", sp.Name, err)
		}
		port, ok := hostPorts[target]
		if !ok {
			return nil, fmt.Errorf("the Service's port %s targets port %d, which the container does not declare", sp.Name, target)
		}
		ports = append(ports, discoveryv1.EndpointPort{Name: &sp.Name, Port: &port, Protocol: &sp.Protocol})
	}
	ready := true
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name + "-host", Namespace: svc.Namespace,
			Labels:          map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: hostEndpointsManager},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID}},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{ip.String()},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &ready},
			NodeName:   &nodeName,
		}},
		Ports: ports,
	}, nil
}
