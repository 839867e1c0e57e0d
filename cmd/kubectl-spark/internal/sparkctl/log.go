package sparkctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

type logOptions struct {
	executor string
	follow   bool
	previous bool
}

func (c *cli) logCmd() *cobra.Command {
	var o logOptions
	cmd := &cobra.Command{
		Use:   "log NAME|sparkconnect/NAME",
		Short: "Print the driver's log (or an executor's, or a Spark Connect server's)",
		Long: `Print the log of the application's driver, of one of its executors (--executor ID,
the current attempt's), or of a Spark Connect server.

--previous prints the previous run of the container, when the kubelet restarted it; an
earlier attempt of the application ran in a pod that no longer exists, and its log went with it.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, name, err := parseRef(args[0], kindSparkApp, kindConnect)
			if err != nil {
				return err
			}
			cl, err := c.connect()
			if err != nil {
				return err
			}
			pod, container, err := c.logTarget(cmd.Context(), cl, k, name, o.executor)
			if err != nil {
				return err
			}
			return streamLog(cmd.Context(), cl, pod, container, o.follow, o.previous, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.executor, "executor", "", "the executor ID (spark-exec-id) whose log to print")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "keep printing as the log grows")
	cmd.Flags().BoolVarP(&o.previous, "previous", "p", false, "the container's previous run")
	return cmd
}

// logTarget finds the pod and container whose log the user asks for.
func (c *cli) logTarget(ctx context.Context, cl *Clients, k kind, name, executor string) (*corev1.Pod, string, error) {
	ns := cl.Namespace
	if k.Kind == kindConnect.Kind {
		if executor != "" {
			return nil, "", usageErrorf("--executor works on SparkApplications")
		}
		sc, err := getConnect(ctx, cl, ns, name)
		if err != nil {
			return nil, "", err
		}
		if sc.Status.Server.PodName == "" {
			return nil, "", fmt.Errorf("SparkConnect %q has no server pod yet (state %q)", name, sc.Status.State)
		}
		pod, err := getPod(ctx, cl, ns, sc.Status.Server.PodName, "SparkConnect "+name+" has no server pod yet")
		return pod, sparkpod.DriverContainerName, err
	}
	app, err := getSparkApp(ctx, cl, ns, name)
	if err != nil {
		return nil, "", err
	}
	if executor == "" {
		state := app.Status.AppState.State
		if state == "" {
			state = "NEW"
		}
		pod, err := getPod(ctx, cl, ns, driverPodName(app), fmt.Sprintf("SparkApplication %q has no driver pod yet (state %s)", name, state))
		return pod, sparkpod.DriverContainerName, err
	}
	sel := labels.Set{sparkpod.LabelAppName: name, sparkpod.LabelSparkRole: sparkpod.RoleExecutor, sparkpod.LabelExecutorID: executor}
	if id := app.Status.SparkApplicationID; id != "" {
		sel[sparkpod.LabelAppSelector] = id
	}
	pods, err := listPods(ctx, cl, ns, sel.String())
	if err != nil {
		return nil, "", fmt.Errorf("listing executor %s of %s: %w", executor, name, err)
	}
	if len(pods) == 0 {
		return nil, "", fmt.Errorf("SparkApplication %q has no executor %s in its current attempt", name, executor)
	}
	newest := slices.MaxFunc(pods, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	return &newest, sparkpod.ExecutorContainerName, nil
}

func getPod(ctx context.Context, cl *Clients, ns, name, missing string) (*corev1.Pod, error) {
	pod, err := getPodObject(ctx, cl, ns, name)
	if apierrors.IsNotFound(err) {
		return nil, errors.New(missing)
	}
	if err != nil {
		return nil, fmt.Errorf("reading pod %s: %w", name, err)
	}
	return pod, nil
}

// streamLog copies a container's log. A pod without the Spark container (a custom template)
// falls back to the pod's first container.
func streamLog(ctx context.Context, cl *Clients, pod *corev1.Pod, container string, follow, previous bool, out io.Writer) error {
	if !slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == container }) && len(pod.Spec.Containers) > 0 {
		container = pod.Spec.Containers[0].Name
	}
	if pod.Status.Phase == corev1.PodPending && !previous && !started(pod, container) {
		return fmt.Errorf("pod %s has not started yet (%s)", pod.Name, podSummary(pod))
	}
	stream, err := cl.Logs(ctx, pod.Namespace, pod.Name, &corev1.PodLogOptions{Container: container, Follow: follow, Previous: previous})
	if err != nil {
		return fmt.Errorf("reading the log of pod %s: %w", pod.Name, err)
	}
	defer stream.Close()
	if _, err := io.Copy(out, stream); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading the log of pod %s: %w", pod.Name, err)
	}
	return nil
}

// started reports whether the container ran or runs, so it has a log.
func started(pod *corev1.Pod, container string) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == container {
			return cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil
		}
	}
	return false
}
