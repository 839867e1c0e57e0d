package stack

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// runMetacontrollerOnHost runs the container of Metacontroller's StatefulSet (installed without
// replicas) as a process of this machine on a simulated node, as runHooksOnHost runs the hook
// server's: the chart's command and arguments (chart/metacontroller-values.yaml), plus what a Pod
// gets from the cluster and a host process must be told: the API server (the admin kubeconfig,
// so it runs as cluster-admin rather than as the chart's ServiceAccount), the leader-election
// namespace (a Pod reads its own) and its probe and metrics listeners on free loopback ports
// instead of every address's 8081 and 9999. It calls the hooks at the host process's address,
// which the chart's registrations name (hookBaseURL): no cluster DNS resolves the Service here.
func (s *Stack) runMetacontrollerOnHost(ctx context.Context, o Options, client kubernetes.Interface) error {
	sets, err := client.AppsV1().StatefulSets(MetacontrollerNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("reading Metacontroller's StatefulSet: %w", err)
	}
	if len(sets.Items) != 1 || len(sets.Items[0].Spec.Template.Spec.Containers) != 1 {
		return fmt.Errorf("Metacontroller's chart must install one StatefulSet of one container for the host process to stand in for it; found %d StatefulSets", len(sets.Items))
	}
	c := sets.Items[0].Spec.Template.Spec.Containers[0]
	var args []string
	if len(c.Command) > 1 {
		args = slices.Clone(c.Command[1:])
	}
	args = append(args, c.Args...)
	probe, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	metrics, err := freePort("127.0.0.1")
	if err != nil {
		return err
	}
	probeAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(probe))
	args = append(args, "--kubeconfig="+s.Kubeconfig, "--leader-election-namespace="+MetacontrollerNamespace,
		"--health-probe-bind-address="+probeAddr, "--metrics-address="+net.JoinHostPort("127.0.0.1", strconv.Itoa(metrics)))
	env, err := containerEnv(c)
	if err != nil {
		return err
	}
	if s.metacontroller, err = startComponent("metacontroller", "Metacontroller", o.Metacontroller, args, env, s.LogDir); err != nil {
		return err
	}
	return s.metacontroller.current().waitFor(ctx, "Metacontroller's readiness", func(ctx context.Context) error {
		return httpOK(ctx, "http://"+probeAddr+"/readyz")
	})
}
