package sparkctl

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func (c *cli) statusCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "status NAME|KIND/NAME",
		Short: "Show the state, attempts, driver, executors, conditions and what an application waits for",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, name, err := parseRef(args[0])
			if err != nil {
				return err
			}
			cl, err := c.connect()
			if err != nil {
				return err
			}
			obj, err := get(cmd.Context(), cl, k, cl.Namespace, name)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if output != "" {
				return printStructured(out, output, obj.Object)
			}
			switch k.Kind {
			case kindSparkApp.Kind:
				app, err := typed[v1beta2.SparkApplication](obj)
				if err != nil {
					return err
				}
				return c.appStatus(cmd.Context(), out, cl, app)
			case kindScheduled.Kind:
				ssa, err := typed[v1beta2.ScheduledSparkApplication](obj)
				if err != nil {
					return err
				}
				return c.scheduledStatus(out, ssa)
			default:
				sc, err := typed[v1alpha1.SparkConnect](obj)
				if err != nil {
					return err
				}
				return c.connectStatus(out, sc)
			}
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// fields prints "Label:  value" lines, aligned, skipping empty values.
type fields struct {
	w    io.Writer
	rows [][2]string
}

func (f *fields) add(label, value string) {
	if value != "" {
		f.rows = append(f.rows, [2]string{label, value})
	}
}

func (f *fields) flush() {
	width := 0
	for _, r := range f.rows {
		width = max(width, len(r[0]))
	}
	for _, r := range f.rows {
		fmt.Fprintf(f.w, "%-*s  %s\n", width+1, r[0]+":", r[1])
	}
}

func (c *cli) appStatus(ctx context.Context, out io.Writer, cl *Clients, app *v1beta2.SparkApplication) error {
	st := app.Status
	f := &fields{w: out}
	f.add("Name", app.Name)
	f.add("Namespace", app.Namespace)
	state := string(st.AppState.State)
	if state == "" {
		state = "NEW"
	}
	f.add("State", state)
	f.add("Error", st.AppState.ErrorMessage)
	f.add("Attempts", fmt.Sprintf("%d run(s), %d submission(s)", st.ExecutionAttempts, st.SubmissionAttempts))
	if st.SubmissionID != "" {
		f.add("Submission", st.SubmissionID+" at "+timestamp(st.LastSubmissionAttemptTime))
	}
	f.add("Spark app ID", st.SparkApplicationID)
	f.add("Terminated", timestamp(st.TerminationTime))
	podName := driverPodName(app)
	pod, err := getPodObject(ctx, cl, app.Namespace, podName)
	switch {
	case apierrors.IsNotFound(err):
		pod = nil
		f.add("Driver", podName+" (no such pod)")
	case err != nil:
		return fmt.Errorf("reading driver pod %s: %w", podName, err)
	default:
		f.add("Driver", podName+" ("+podSummary(pod)+")")
	}
	if ui := st.DriverInfo; ui.WebUIServiceName != "" {
		f.add("Spark UI", fmt.Sprintf("service %s port %d (kubectl spark forward %s)", ui.WebUIServiceName, ui.WebUIPort, app.Name))
	}
	f.add("UI ingress", st.DriverInfo.WebUIIngressAddress)
	f.add("UI route", routeSummary(st.DriverInfo.WebUIHTTPRouteName, st.DriverInfo.WebUIHTTPRouteAddress))
	// The History Server shows the UI from the event log, also once the driver is gone.
	if st.HistoryURL != "" {
		f.add("History", fmt.Sprintf("%s (kubectl spark ui %s)", st.HistoryURL, app.Name))
	}
	f.add("Executors", executorCounts(st.ExecutorState))
	if !terminal(st.AppState.State) {
		f.add("Waiting for", waitingFor(app, pod))
	}
	var progress *Progress
	if st.SparkApplicationID != "" {
		p, note, err := readProgress(ctx, cl, app)
		if err != nil {
			// The status is there to read even when Spark's REST API is not.
			note = err.Error()
		}
		f.add("Progress", note)
		progress = p
	}
	f.flush()
	if progress != nil {
		from := "the driver's UI"
		if progress.Source == "history" {
			from = "the History Server"
		}
		fmt.Fprintf(out, "Progress (from %s):\n", from)
		for _, line := range alignRows("  ", progressRows(progress)) {
			fmt.Fprintln(out, line)
		}
	}
	printConditions(out, st.Conditions)
	return nil
}

func executorCounts(states map[string]v1beta2.ExecutorState) string {
	if len(states) == 0 {
		return ""
	}
	counts := map[string]int{}
	for _, s := range states {
		counts[string(s)]++
	}
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	return strings.Join(parts, ", ")
}

// podSummary is the pod's phase, readiness and, when a container waits or ended, why.
func podSummary(pod *corev1.Pod) string {
	parts := []string{string(pod.Status.Phase)}
	if pod.DeletionTimestamp != nil {
		parts = append(parts, "terminating")
	}
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
			parts = append(parts, cs.Name+": "+cs.State.Waiting.Reason)
		case cs.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("%s: exit %d", cs.Name, cs.State.Terminated.ExitCode))
		case cs.State.Running != nil && cs.Ready:
			parts = append(parts, cs.Name+": ready")
		}
	}
	return strings.Join(parts, ", ")
}

// waitingFor says what a live application waits for, from its state and its driver Pod.
func waitingFor(app *v1beta2.SparkApplication, pod *corev1.Pod) string {
	st := app.Status
	switch st.AppState.State {
	case v1beta2.ApplicationStateNew:
		return "the operator to submit it (no status yet: is sparkhooks running, and Metacontroller?)"
	case v1beta2.ApplicationStatePendingRerun:
		return "the retry interval of its restart policy to pass before the next attempt"
	case v1beta2.ApplicationStateSuspended:
		return "spec.suspend to be unset"
	}
	if pod == nil {
		return "the driver pod to be created"
	}
	for _, cond := range pod.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
			return "the driver pod to be scheduled: " + strings.TrimSpace(cond.Reason+" "+cond.Message)
		}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			return fmt.Sprintf("container %s to start: %s", cs.Name, strings.TrimSpace(w.Reason+" "+w.Message))
		}
	}
	if pod.Status.Phase == corev1.PodPending {
		return "the driver pod to start"
	}
	for _, cond := range st.Conditions {
		if cond.Status == metav1.ConditionFalse {
			return fmt.Sprintf("%s (%s: %s)", cond.Type, cond.Reason, cond.Message)
		}
	}
	if pod.Status.Phase == corev1.PodRunning {
		return "the driver to finish"
	}
	return ""
}

func printConditions(out io.Writer, conds []metav1.Condition) {
	if len(conds) == 0 {
		return
	}
	fmt.Fprintln(out, "Conditions:")
	t := newTable(out, "  TYPE", "STATUS", "REASON", "SINCE", "MESSAGE")
	for _, cond := range conds {
		t.row("  "+cond.Type, string(cond.Status), cond.Reason, timestamp(cond.LastTransitionTime), cond.Message)
	}
	_ = t.flush()
}

func (c *cli) scheduledStatus(out io.Writer, ssa *v1beta2.ScheduledSparkApplication) error {
	st := ssa.Status
	f := &fields{w: out}
	f.add("Name", ssa.Name)
	f.add("Namespace", ssa.Namespace)
	f.add("Schedule", strings.TrimSpace(ssa.Spec.Schedule+" "+ssa.Spec.TimeZone))
	if ssa.Spec.Suspend != nil && *ssa.Spec.Suspend {
		f.add("Suspended", "true")
	}
	f.add("State", string(st.ScheduleState))
	f.add("Reason", st.Reason)
	if st.LastRunName != "" {
		f.add("Last run", st.LastRunName+" at "+timestamp(st.LastRun))
	}
	f.add("Next run", timestamp(st.NextRun))
	f.add("Succeeded runs", strings.Join(st.PastSuccessfulRunNames, ", "))
	f.add("Failed runs", strings.Join(st.PastFailedRunNames, ", "))
	f.flush()
	printConditions(out, st.Conditions)
	return nil
}

// routeSummary is an HTTPRoute's address and name; an address without a host is a path on the
// Gateway's own address.
func routeSummary(name, address string) string {
	switch {
	case name == "":
		return ""
	case strings.HasPrefix(address, "/"):
		return fmt.Sprintf("%s on the Gateway's address (HTTPRoute %s)", address, name)
	}
	return fmt.Sprintf("%s (HTTPRoute %s)", address, name)
}

func (c *cli) connectStatus(out io.Writer, sc *v1alpha1.SparkConnect) error {
	st := sc.Status
	f := &fields{w: out}
	f.add("Name", sc.Name)
	f.add("Namespace", sc.Namespace)
	f.add("State", string(st.State))
	f.add("Server", strings.TrimSpace(st.Server.PodName+" "+st.Server.PodIP))
	if st.Server.ServiceName != "" {
		f.add("Service", st.Server.ServiceName+" (port 15002)")
	}
	f.add("gRPC route", st.Server.GRPCRouteName)
	f.add("UI route", routeSummary(st.Server.WebUIHTTPRouteName, st.Server.WebUIHTTPRouteAddress))
	var parts []string
	for _, phase := range slices.Sorted(maps.Keys(st.Executors)) {
		parts = append(parts, fmt.Sprintf("%d %s", st.Executors[phase], phase))
	}
	f.add("Executors", strings.Join(parts, ", "))
	f.flush()
	printConditions(out, st.Conditions)
	return nil
}
