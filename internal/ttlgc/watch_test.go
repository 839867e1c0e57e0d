package ttlgc

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
)

// gone waits until the application ns/name of res is deleted.
func gone(t *testing.T, get func() error) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if apierrors.IsNotFound(get()) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// A watch deletes what is expired when it starts and what expires later, as the hook marks it,
// of both kinds, and leaves the rest.
func TestWatch(t *testing.T) {
	apacheRunning := strings.Replace(named(t, withConditions(""), "a", "pi"), "sparkoperator.k8s.io/v1beta2", "spark.apache.org/v1", 1)
	client := newClient(t, named(t, withConditions("", expiredCondition), "a", "old"), named(t, withConditions(""), "a", "running"),
		named(t, withConditions(""), "b", "other"), apacheRunning)
	got := recordDeletes(client, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, client, WatchOptions{Options: Options{Namespaces: []string{"a"}}, Resync: time.Minute, Discover: time.Minute}, slog.New(slog.DiscardHandler))
	}()
	defer func() {
		cancel()
		assert.NoError(t, <-done, "Watch ends without an error with its context")
	}()
	get := func(res schema.GroupVersionResource, ns, name string) func() error {
		return func() error {
			_, err := client.Resource(res).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
			return err
		}
	}
	require.True(t, gone(t, get(Resource, "a", "old")), "the application expired before the watch is deleted")

	// The hook marks two more Expired: their next version is deleted.
	for _, a := range []struct {
		res  schema.GroupVersionResource
		name string
	}{{Resource, "running"}, {ApacheResource, "pi"}} {
		obj, err := client.Resource(a.res).Namespace("a").Get(context.Background(), a.name, metav1.GetOptions{})
		require.NoError(t, err)
		expired := app(t, withConditions("", expiredCondition))
		require.NoError(t, unstructured.SetNestedField(obj.Object, expired.Object["status"], "status"))
		_, err = client.Resource(a.res).Namespace("a").Update(context.Background(), obj, metav1.UpdateOptions{})
		require.NoError(t, err)
		assert.True(t, gone(t, get(a.res, "a", a.name)), "%s expired while watched is deleted", a.name)
	}
	assert.NoError(t, get(Resource, "b", "other")(), "another namespace is not watched")
	var names []string
	for _, d := range *got {
		names = append(names, d.name)
		require.NotNil(t, d.opts.Preconditions, "the deletion of %s is pinned to the object seen", d.name)
		assert.Equal(t, types.UID(d.name), *d.opts.Preconditions.UID)
	}
	assert.Equal(t, []string{"a/old", "a/running", "a/pi"}, names)
}

// A kind the API server does not serve yet is looked for until its CRD is there.
func TestWatchAwaitsApachesCRD(t *testing.T) {
	apache := strings.Replace(named(t, withConditions("", expiredCondition), "a", "pi"), "sparkoperator.k8s.io/v1beta2", "spark.apache.org/v1", 1)
	client := newClient(t, apache)
	served := make(chan struct{})
	client.PrependReactor("list", ApacheResource.Resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetResource() != ApacheResource {
			return false, nil, nil
		}
		select {
		case <-served:
			return false, nil, nil
		default:
			return true, nil, apierrors.NewNotFound(ApacheResource.GroupResource(), "")
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, client, WatchOptions{Resync: time.Minute, Discover: 20 * time.Millisecond}, slog.New(slog.DiscardHandler))
	}()
	defer func() {
		cancel()
		assert.NoError(t, <-done)
	}()
	get := func() error {
		_, err := client.Resource(ApacheResource).Namespace("a").Get(context.Background(), "pi", metav1.GetOptions{})
		return err
	}
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, get(), "not deleted while the kind is not served")
	close(served)
	assert.True(t, gone(t, get), "deleted once the CRD is there")
}

// What a watch holds of an application is what Expired reads.
func TestStrip(t *testing.T) {
	full := app(t, withConditions("", expiredCondition))
	full.Object["spec"] = map[string]any{"sparkConf": map[string]any{"spark.executor.instances": "100"}}
	full.SetLabels(map[string]string{"team": "a"})
	stripped, err := strip(&full)
	require.NoError(t, err)
	s := stripped.(*unstructured.Unstructured)
	assert.NotContains(t, s.Object, "spec")
	assert.Empty(t, s.GetLabels())
	want, ok := expired(&full)
	require.True(t, ok)
	got, ok := expired(s)
	require.True(t, ok)
	assert.Equal(t, want, got)
}
