package sparkctl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

type listOptions struct {
	allNamespaces bool
	output        string
}

func (c *cli) listCmd() *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list [sparkapp|scheduledsparkapp|sparkconnect]",
		Short: "List applications (SparkApplications unless a kind is given)",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			k := kindSparkApp
			if len(args) == 1 {
				var err error
				if k, err = kindByAlias(args[0]); err != nil {
					return err
				}
			}
			return c.list(cmd, k, &o)
		},
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the applications of every namespace")
	addOutputFlag(cmd, &o.output)
	return cmd
}

func (c *cli) list(cmd *cobra.Command, k kind, o *listOptions) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	ns := cl.Namespace
	if o.allNamespaces {
		ns = metav1.NamespaceAll
	}
	list, err := cl.Dynamic.Resource(k.GVR).Namespace(ns).List(cmd.Context(), metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing %s: %w", k.GVR.Resource, err)
	}
	items := list.Items
	slices.SortFunc(items, func(a, b unstructured.Unstructured) int {
		if d := strings.Compare(a.GetNamespace(), b.GetNamespace()); d != 0 {
			return d
		}
		return strings.Compare(a.GetName(), b.GetName())
	})
	out := cmd.OutOrStdout()
	if o.output != "" {
		objs := make([]map[string]any, len(items))
		for i := range items {
			objs[i] = items[i].Object
		}
		return printStructured(out, o.output, listObject(objs))
	}
	if len(items) == 0 {
		if o.allNamespaces {
			fmt.Fprintf(cmd.ErrOrStderr(), "No %s found.\n", k.GVR.Resource)
		} else {
			fmt.Fprintf(cmd.ErrOrStderr(), "No %s found in namespace %s.\n", k.GVR.Resource, ns)
		}
		return nil
	}
	rows, headers, err := c.listRows(k, items)
	if err != nil {
		return err
	}
	if o.allNamespaces {
		headers = append([]string{"NAMESPACE"}, headers...)
		for i := range rows {
			rows[i] = append([]string{items[i].GetNamespace()}, rows[i]...)
		}
	}
	t := newTable(out, headers...)
	for _, r := range rows {
		t.row(r...)
	}
	return t.flush()
}

// listRows are the CRDs' printer columns, with attempts split into runs and submissions.
func (c *cli) listRows(k kind, items []unstructured.Unstructured) ([][]string, []string, error) {
	now := c.env.Now()
	var rows [][]string
	switch k.Kind {
	case kindSparkApp.Kind:
		for i := range items {
			app, err := typed[v1beta2.SparkApplication](&items[i])
			if err != nil {
				return nil, nil, err
			}
			st := app.Status
			rows = append(rows, []string{
				app.Name, string(st.AppState.State), strconv.Itoa(int(st.ExecutionAttempts)), strconv.Itoa(int(st.SubmissionAttempts)),
				timestamp(st.LastSubmissionAttemptTime), timestamp(st.TerminationTime), age(app.CreationTimestamp, now),
			})
		}
		return rows, []string{"NAME", "STATUS", "ATTEMPTS", "SUBMISSIONS", "START", "FINISH", "AGE"}, nil
	case kindScheduled.Kind:
		for i := range items {
			ssa, err := typed[v1beta2.ScheduledSparkApplication](&items[i])
			if err != nil {
				return nil, nil, err
			}
			st := ssa.Status
			suspend := "false"
			if ssa.Spec.Suspend != nil && *ssa.Spec.Suspend {
				suspend = "true"
			}
			rows = append(rows, []string{
				ssa.Name, ssa.Spec.Schedule, ssa.Spec.TimeZone, suspend, string(st.ScheduleState),
				timestamp(st.LastRun), st.LastRunName, timestamp(st.NextRun), age(ssa.CreationTimestamp, now),
			})
		}
		return rows, []string{"NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "STATE", "LAST RUN", "LAST RUN NAME", "NEXT RUN", "AGE"}, nil
	default:
		for i := range items {
			sc, err := typed[v1alpha1.SparkConnect](&items[i])
			if err != nil {
				return nil, nil, err
			}
			rows = append(rows, []string{sc.Name, string(sc.Status.State), sc.Status.Server.PodName, age(sc.CreationTimestamp, now)})
		}
		return rows, []string{"NAME", "STATUS", "PODNAME", "AGE"}, nil
	}
}
