package sparkctl

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sparkhooks/sparkhooks/internal/sparkconnect"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

func (c *cli) eventCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "event NAME|KIND/NAME",
		Short: "Show the events of an application and of its pods, oldest first",
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
			ctx := cmd.Context()
			obj, err := get(ctx, cl, k, cl.Namespace, name)
			if err != nil {
				return err
			}
			pods, err := c.podsOf(ctx, cl, k, obj.GetNamespace(), name)
			if err != nil {
				return err
			}
			all, err := listEvents(ctx, cl, obj.GetNamespace())
			if err != nil {
				return fmt.Errorf("listing events in %s: %w", obj.GetNamespace(), err)
			}
			var events []corev1.Event
			for _, e := range all {
				ref := e.InvolvedObject
				if (ref.Kind == k.Kind && ref.Name == name) || (ref.Kind == "Pod" && pods(ref.Name)) {
					events = append(events, e)
				}
			}
			slices.SortStableFunc(events, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
			if output != "" {
				items := make([]map[string]any, len(events))
				for i := range events {
					u, err := toUnstructured(&events[i])
					if err != nil {
						return err
					}
					u.SetAPIVersion("v1")
					u.SetKind("Event")
					items[i] = u.Object
				}
				return printStructured(cmd.OutOrStdout(), output, listObject(items))
			}
			if len(events) == 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "No events for %s %s.\n", k.Kind, name)
				return nil
			}
			now := c.env.Now()
			t := newTable(cmd.OutOrStdout(), "LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE")
			for _, e := range events {
				t.row(age(metav1.NewTime(eventTime(e)), now), e.Type, e.Reason,
					strings.ToLower(e.InvolvedObject.Kind)+"/"+e.InvolvedObject.Name, strings.TrimSpace(e.Message))
			}
			return t.flush()
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// podsOf tells which pod names belong to the application: its driver (every attempt reuses the
// name) and the executors or servers that carry its label now.
func (c *cli) podsOf(ctx context.Context, cl *Clients, k kind, namespace, name string) (func(string) bool, error) {
	names := map[string]bool{}
	selector := labels.Set{sparkpod.LabelAppName: name}
	switch k.Kind {
	case kindSparkApp.Kind:
		app, err := getSparkApp(ctx, cl, namespace, name)
		if err != nil {
			return nil, err
		}
		names[driverPodName(app)] = true
	case kindConnect.Kind:
		selector = labels.Set{sparkconnect.LabelConnectName: name}
	case kindScheduled.Kind:
		selector = labels.Set{}
	}
	if len(selector) > 0 {
		pods, err := listPods(ctx, cl, namespace, selector.String())
		if err != nil {
			return nil, fmt.Errorf("listing pods of %s: %w", name, err)
		}
		for _, p := range pods {
			names[p.Name] = true
		}
	}
	return func(pod string) bool { return names[pod] }, nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	}
	return e.CreationTimestamp.Time
}
