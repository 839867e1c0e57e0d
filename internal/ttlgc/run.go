package ttlgc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// Resource is the Kubeflow API's SparkApplications, and ApacheResource the Apache operator's,
// which the same attempt core decides and marks Expired the same way (ttlAfterStopMillis).
var (
	Resource       = v1beta2.GroupVersion.WithResource("sparkapplications")
	ApacheResource = sparkv1.GroupVersion.WithResource("sparkapplications")
)

// resources are what a pass lists and deletes, in order.
var resources = []schema.GroupVersionResource{Resource, ApacheResource}

// pageSize bounds the memory of a pass over a namespace with many finished applications.
const pageSize = 500

// Options select what a pass looks at and whether it deletes.
type Options struct {
	// Namespaces to list; none means every namespace.
	Namespaces []string
	// DryRun sends every deletion as a server-side dry run: the API server checks permissions
	// and preconditions and answers as it would, and nothing is deleted.
	DryRun bool
}

// Result counts what a pass did.
type Result struct {
	Listed  int
	Expired int
	// Deleted counts the deletions the API server accepted (or would have, in a dry run).
	Deleted int
	// Skipped were deleted or changed between the list and the deletion (NotFound, Conflict);
	// a changed one is judged again, on its new status, by the next pass.
	Skipped int
}

// Run makes one pass: it lists the SparkApplications of each namespace and deletes those
// Expired selects. An API error other than NotFound or Conflict does not stop the pass; the
// errors are returned together, after every namespace was tried.
func Run(ctx context.Context, client dynamic.Interface, opts Options, logger *slog.Logger) (Result, error) {
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	p := pass{opts: opts, logger: logger}
	var errs []error
	for _, res := range resources {
		p.apps, p.resource = client.Resource(res), res
		for _, ns := range namespaces {
			errs = append(errs, p.namespace(ctx, ns)...)
		}
	}
	return p.result, errors.Join(errs...)
}

type pass struct {
	apps     dynamic.NamespaceableResourceInterface
	resource schema.GroupVersionResource
	opts     Options
	logger   *slog.Logger
	result   Result
}

func (p *pass) namespace(ctx context.Context, ns string) []error {
	var errs []error
	next := ""
	for {
		list, err := p.apps.Namespace(ns).List(ctx, metav1.ListOptions{Limit: pageSize, Continue: next})
		if apierrors.IsNotFound(err) && p.resource == ApacheResource {
			return errs // a cluster that serves only the Kubeflow API
		}
		if err != nil {
			where := "every namespace"
			if ns != metav1.NamespaceAll {
				where = "namespace " + ns
			}
			return append(errs, fmt.Errorf("list %s in %s: %w", p.resource.GroupResource(), where, err))
		}
		p.result.Listed += len(list.Items)
		for _, t := range Expired(list.Items) {
			p.result.Expired++
			if err := p.delete(ctx, t); err != nil {
				errs = append(errs, err)
			}
		}
		if next = list.GetContinue(); next == "" {
			return errs
		}
	}
}

func (p *pass) delete(ctx context.Context, t Target) error {
	opts := metav1.DeleteOptions{
		// The UID keeps an application recreated under the same name; the resourceVersion keeps
		// one edited since the list (its TTL raised, say) until the hook has judged the edit.
		Preconditions: &metav1.Preconditions{UID: &t.UID, ResourceVersion: &t.ResourceVersion},
	}
	if p.opts.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	attrs := []any{
		slog.String("resource", p.resource.GroupResource().String()), slog.String("namespace", t.Namespace), slog.String("name", t.Name), slog.String("uid", string(t.UID)),
		slog.String("reason", t.Reason), slog.String("message", t.Message), slog.Bool("dry_run", p.opts.DryRun),
	}
	err := p.apps.Namespace(t.Namespace).Delete(ctx, t.Name, opts)
	switch {
	case err == nil:
		p.result.Deleted++
		p.logger.Info("deleted expired SparkApplication", attrs...)
		return nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		p.result.Skipped++
		p.logger.Info("skipped SparkApplication: deleted or changed since it was listed", append(attrs, slog.String("error", err.Error()))...)
		return nil
	default:
		return fmt.Errorf("delete %s %s/%s: %w", p.resource.GroupResource(), t.Namespace, t.Name, err)
	}
}
