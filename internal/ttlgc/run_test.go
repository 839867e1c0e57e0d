package ttlgc

import (
	"bytes"
	"context"
	"log/slog"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

func newClient(t *testing.T, apps ...string) *dynamicfake.FakeDynamicClient {
	t.Helper()
	objs := make([]runtime.Object, 0, len(apps))
	for _, doc := range apps {
		u := app(t, doc)
		objs = append(objs, &u)
	}
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{Resource: "SparkApplicationList", ApacheResource: "SparkApplicationList"}, objs...)
}

// named gives the fixture its own name, namespace and uid.
func named(t *testing.T, doc, ns, name string) string {
	t.Helper()
	u := app(t, doc)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetUID(types.UID(ns + "/" + name))
	b, err := u.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

type deleted struct {
	name string
	opts metav1.DeleteOptions
}

// recordDeletes records every deletion and answers it with the error failFor gives its name
// (nil lets the fake store delete the object).
func recordDeletes(client *dynamicfake.FakeDynamicClient, failFor map[string]error) *[]deleted {
	var got []deleted
	client.PrependReactor("delete", Resource.Resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
		d := action.(k8stesting.DeleteActionImpl)
		got = append(got, deleted{name: d.Namespace + "/" + d.Name, opts: d.DeleteOptions})
		if err := failFor[d.Namespace+"/"+d.Name]; err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
	return &got
}

func remaining(t *testing.T, client *dynamicfake.FakeDynamicClient) []string {
	t.Helper()
	list, err := client.Resource(Resource).Namespace(metav1.NamespaceAll).List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	var names []string
	for _, item := range list.Items {
		names = append(names, item.GetNamespace()+"/"+item.GetName())
	}
	sort.Strings(names)
	return names
}

func TestRun(t *testing.T) {
	gone := apierrors.NewNotFound(Resource.GroupResource(), "old")
	changed := apierrors.NewConflict(Resource.GroupResource(), "old", nil)
	forbidden := apierrors.NewForbidden(Resource.GroupResource(), "old", nil)
	tests := []struct {
		name       string
		opts       Options
		failFor    map[string]error
		want       Result
		wantLeft   []string
		wantDelete []string
		wantErr    string
	}{
		{
			name:       "every namespace",
			want:       Result{Listed: 4, Expired: 2, Deleted: 2},
			wantLeft:   []string{"a/running", "b/running"},
			wantDelete: []string{"a/old", "b/old"},
		},
		{
			name:       "configured namespaces only",
			opts:       Options{Namespaces: []string{"b"}},
			want:       Result{Listed: 2, Expired: 1, Deleted: 1},
			wantLeft:   []string{"a/old", "a/running", "b/running"},
			wantDelete: []string{"b/old"},
		},
		{
			name:       "gone or changed since the list is skipped",
			failFor:    map[string]error{"a/old": gone, "b/old": changed},
			want:       Result{Listed: 4, Expired: 2, Skipped: 2},
			wantLeft:   []string{"a/old", "a/running", "b/old", "b/running"},
			wantDelete: []string{"a/old", "b/old"},
		},
		{
			name:       "other API errors fail the pass after trying the rest",
			failFor:    map[string]error{"a/old": forbidden},
			want:       Result{Listed: 4, Expired: 2, Deleted: 1},
			wantLeft:   []string{"a/old", "a/running", "b/running"},
			wantDelete: []string{"a/old", "b/old"},
			wantErr:    "delete sparkapplications.sparkoperator.k8s.io a/old: sparkapplications.sparkoperator.k8s.io \"old\" is forbidden",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expired := withConditions("", expiredCondition)
			client := newClient(t,
				named(t, expired, "a", "old"), named(t, withConditions(""), "a", "running"),
				named(t, expired, "b", "old"), named(t, withConditions(""), "b", "running"))
			got := recordDeletes(client, tt.failFor)
			var logs bytes.Buffer
			res, err := Run(context.Background(), client, tt.opts, slog.New(slog.NewTextHandler(&logs, nil)))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.want, res)
			assert.Equal(t, tt.wantLeft, remaining(t, client))
			var names []string
			for _, d := range *got {
				names = append(names, d.name)
				uid := types.UID(d.name)
				rv := "42"
				assert.Equal(t, &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}, d.opts.Preconditions,
					"the deletion of %s is pinned to the listed object", d.name)
			}
			sort.Strings(names)
			assert.Equal(t, tt.wantDelete, names)
			for _, name := range tt.wantDelete {
				if tt.failFor[name] == nil {
					assert.Contains(t, logs.String(), "deleted expired SparkApplication")
				}
			}
		})
	}
}

func TestRunDryRun(t *testing.T) {
	client := newClient(t, named(t, withConditions("", expiredCondition), "a", "old"))
	got := recordDeletes(client, map[string]error{})
	res, err := Run(context.Background(), client, Options{DryRun: true}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	assert.Equal(t, Result{Listed: 1, Expired: 1, Deleted: 1}, res)
	require.Len(t, *got, 1)
	assert.Equal(t, []string{metav1.DryRunAll}, (*got)[0].opts.DryRun, "the deletion is a server-side dry run")
}

func TestRunListError(t *testing.T) {
	client := newClient(t)
	client.PrependReactor("list", Resource.Resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd down")
	})
	_, err := Run(context.Background(), client, Options{Namespaces: []string{"a", "b"}}, slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "list sparkapplications.sparkoperator.k8s.io in namespace a: etcd down")
	require.ErrorContains(t, err, "list sparkapplications.sparkoperator.k8s.io in namespace b: etcd down")
}

// The Apache operator's SparkApplications expire as the Kubeflow API's do; a cluster without
// their CRD is passed over.
func TestRunApacheApplications(t *testing.T) {
	apache := strings.Replace(named(t, withConditions("", expiredCondition), "a", "pi"), "sparkoperator.k8s.io/v1beta2", "spark.apache.org/v1", 1)
	client := newClient(t, apache, named(t, withConditions("", expiredCondition), "a", "old"))
	res, err := Run(context.Background(), client, Options{}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	assert.Equal(t, Result{Listed: 2, Expired: 2, Deleted: 2}, res)
	_, err = client.Resource(ApacheResource).Namespace("a").Get(context.Background(), "pi", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "the Apache application is deleted: %v", err)

	client = newClient(t)
	client.PrependReactor("list", ApacheResource.Resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetResource() != ApacheResource {
			return false, nil, nil
		}
		return true, nil, apierrors.NewNotFound(ApacheResource.GroupResource(), "")
	})
	_, err = Run(context.Background(), client, Options{}, slog.New(slog.DiscardHandler))
	assert.NoError(t, err, "no Apache CRD: nothing to do")
}
