package sparkctl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func (c *cli) deleteCmd() *cobra.Command {
	var wait bool
	cmd := &cobra.Command{
		Use:   "delete NAME|KIND/NAME...",
		Short: "Delete applications (their pods, services and config maps go with them)",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.connect()
			if err != nil {
				return err
			}
			for _, arg := range args {
				k, name, err := parseRef(arg)
				if err != nil {
					return err
				}
				if err := c.deleteObject(cmd.Context(), cl, k, cl.Namespace, name, wait); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s %q deleted\n", k.resourceName(), name)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "return once the object is gone, not when its deletion starts")
	return cmd
}

// deleteObject deletes one object in the background, as kubectl does, and with wait polls until
// it is gone (finalizers done).
func (c *cli) deleteObject(ctx context.Context, cl *Clients, k kind, namespace, name string, wait bool) error {
	client := cl.Dynamic.Resource(k.GVR).Namespace(namespace)
	policy := metav1.DeletePropagationBackground
	err := client.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if apierrors.IsNotFound(err) {
		return notFoundError(k, namespace, name)
	}
	if err != nil {
		return fmt.Errorf("deleting %s %s/%s: %w", k.Kind, namespace, name, err)
	}
	for wait {
		_, err := client.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("waiting for %s %s/%s to be deleted: %w", k.Kind, namespace, name, err)
		}
		if err := c.wait(ctx); err != nil {
			return fmt.Errorf("waiting for %s %s/%s to be deleted: %w", k.Kind, namespace, name, err)
		}
	}
	return nil
}
