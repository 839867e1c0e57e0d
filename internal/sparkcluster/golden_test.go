package sparkcluster

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/event"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/crdschema"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/sparkcluster/")

const goldenDir = "../../testdata/sparkcluster"

type goldenCase struct {
	name       string
	finalizing bool
	setup      func(t *testing.T) *world
}

func fresh(doc string, steps ...func(*world)) func(t *testing.T) *world {
	return func(t *testing.T) *world {
		w := newWorld(t, doc)
		for _, s := range steps {
			s(w)
		}
		return w
	}
}

func settled(w *world) { w.settle(); w.advance(30 * time.Second) }
func healthy(w *world) {
	settled(w)
	w.ready(roleMaster, 1)
	w.ready(roleWorker, 3)
	w.settle()
	w.advance(time.Minute)
}

const autoscaledYAML = `
apiVersion: spark.apache.org/v1
kind: SparkCluster
metadata:
  name: elastic
spec:
  runtimeVersions:
    sparkVersion: "4.0.1"
  clusterTolerations:
    instanceConfig:
      initWorkers: 1
      minWorkers: 1
      maxWorkers: 5
  sparkConf:
    spark.kubernetes.container.image: "apache/spark:{{SPARK_VERSION}}-scala2.13-java17-ubuntu"
  masterSpec:
    serviceSpec:
      type: LoadBalancer
    serviceMetadata:
      annotations: {service.beta.kubernetes.io/aws-load-balancer-internal: "true"}
`

func suspendAndSettle(w *world) {
	w.edit(func(s *sparkv1.ClusterSpec) { s.Suspend = true })
	w.settle()
	w.advance(time.Minute)
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{name: "new", setup: fresh(clusterYAML)},
		{name: "new-autoscaled", setup: fresh(autoscaledYAML)},
		{name: "new-invalid-bounds", setup: fresh(clusterYAML, func(w *world) {
			w.c.Spec.ClusterTolerations.InstanceConfig.InitWorkers = 5
		})},
		{name: "master-ready-workers-not", setup: fresh(clusterYAML, settled, func(w *world) { w.ready(roleMaster, 1); w.ready(roleWorker, 2) })},
		{name: "healthy", setup: fresh(clusterYAML, settled, func(w *world) { w.ready(roleMaster, 1); w.ready(roleWorker, 3) })},
		{name: "healthy-settled", setup: fresh(clusterYAML, healthy)},
		{name: "worker-unschedulable", setup: fresh(clusterYAML, settled, func(w *world) {
			w.ready(roleMaster, 1)
			w.ready(roleWorker, 2)
			w.pod(roleWorker, 2, map[string]any{"phase": "Pending", "conditions": []any{map[string]any{
				"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
				"message": "0/3 nodes are available: 3 Insufficient cpu.",
			}}})
		})},
		{name: "master-crash-looping", setup: fresh(clusterYAML, healthy, func(w *world) {
			w.ready(roleMaster, 0)
			w.pod(roleMaster, 0, map[string]any{"phase": "Running", "containerStatuses": []any{map[string]any{
				"name": "master", "ready": false, "restartCount": 5, "image": "apache/spark:4.0.1", "imageID": "",
				"state": map[string]any{"waiting": map[string]any{"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}},
			}}})
		})},
		{name: "healthy-master-lost", setup: fresh(clusterYAML, healthy, func(w *world) { w.ready(roleMaster, 0) })},
		{name: "more-workers-and-conf", setup: fresh(clusterYAML, healthy, func(w *world) {
			w.edit(func(s *sparkv1.ClusterSpec) {
				s.ClusterTolerations.InstanceConfig = sparkv1.WorkerInstanceConfig{InitWorkers: 5, MinWorkers: 3, MaxWorkers: 5}
				s.SparkConf["spark.worker.cleanup.enabled"] = "true"
			})
		})},
		{name: "invalid-edit-while-healthy", setup: fresh(clusterYAML, healthy, func(w *world) {
			w.edit(func(s *sparkv1.ClusterSpec) { s.ClusterTolerations.InstanceConfig.MinWorkers = 9 })
		})},
		{name: "headless-load-balancer", setup: fresh(autoscaledYAML, func(w *world) {
			w.c.Spec.MasterSpec.ServiceSpec.ClusterIP = corev1.ClusterIPNone
		})},
		{name: "created-suspended", setup: fresh(clusterYAML, func(w *world) { w.c.Spec.Suspend = true })},
		{name: "suspending-healthy", setup: fresh(autoscaledYAML, settled, func(w *world) {
			w.ready(roleMaster, 1)
			w.ready(roleWorker, 1)
			w.settle()
			w.edit(func(s *sparkv1.ClusterSpec) { s.Suspend = true })
		})},
		{name: "suspended-settled", setup: fresh(clusterYAML, healthy, suspendAndSettle)},
		{name: "resumed", setup: fresh(clusterYAML, healthy, suspendAndSettle, func(w *world) {
			w.edit(func(s *sparkv1.ClusterSpec) { s.Suspend = false })
		})},
		{name: "resumed-old-workers-going", setup: fresh(clusterYAML, healthy, func(w *world) {
			w.edit(func(s *sparkv1.ClusterSpec) { s.Suspend = true })
			w.deletingStatefulSets = true
			w.settle()
			w.edit(func(s *sparkv1.ClusterSpec) { s.Suspend = false })
		})},
		{name: "deleted", finalizing: true, setup: fresh(clusterYAML, healthy, func(w *world) {
			w.c.DeletionTimestamp = ptr.To(metav1.NewTime(w.now))
		})},
		{name: "deleted-children-gone", finalizing: true, setup: fresh(clusterYAML, healthy, func(w *world) {
			w.c.DeletionTimestamp = ptr.To(metav1.NewTime(w.now))
			for _, objs := range w.children {
				clear(objs)
			}
		})},
	}
}

// TestGolden builds each case's request, checks it against request.json, runs the hook and
// checks the answer against response.json; -update rewrites both. Statuses must validate
// against the CRD.
func TestGolden(t *testing.T) {
	crd, err := crdschema.Load(filepath.Join("..", "..", "crds", "spark.apache.org_sparkclusters.yaml"))
	require.NoError(t, err)
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			w := c.setup(t)
			req := w.request(c.finalizing)
			reqBody := goldentest.Indented(t, req)
			var resp any
			r, outcome, err := Sync(req, w.now)
			var events []event.Event
			if err != nil {
				resp = goldentest.ErrorAnswer(err)
			} else {
				resp = r
				if !c.finalizing {
					story, err := outcome.Story()
					require.NoError(t, err)
					events = story.Events
				}
				var obj map[string]any
				require.NoError(t, json.Unmarshal(coretest.MustJSON(t, w.c), &obj))
				var status map[string]any
				require.NoError(t, json.Unmarshal(coretest.MustJSON(t, r.Status), &status))
				obj["apiVersion"], obj["kind"], obj["status"] = sparkv1.GroupVersion.String(), sparkv1.KindSparkCluster, status
				require.Empty(t, crdschema.WithoutCELSkipped(crd.Validate(obj)), "the status does not validate against the CRD")
			}
			dir := filepath.Join(goldenDir, c.name)
			compareGolden(t, filepath.Join(dir, "now.txt"), []byte(w.now.Format(time.RFC3339)+"\n"))
			compareGolden(t, filepath.Join(dir, "request.json"), reqBody)
			compareGolden(t, filepath.Join(dir, "response.json"), goldentest.Indented(t, resp))
			goldentest.CompareEvents(t, filepath.Join(dir, "events.json"), events, len(events), *update, "go test ./internal/sparkcluster -run TestGolden")
		})
	}
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldentest.Compare(t, path, got, *update, "go test ./internal/sparkcluster -run TestGolden")
}

func TestCustomizeAsksForTheClusterPods(t *testing.T) {
	w := newWorld(t, clusterYAML)
	resp, err := Customize(&metacontroller.CustomizeRequest{Parent: coretest.MustJSON(t, w.c)})
	require.NoError(t, err)
	require.Len(t, resp.RelatedResources, 1)
	rule := resp.RelatedResources[0]
	assert.Equal(t, "pods", rule.Resource)
	assert.Equal(t, map[string]string{LabelClusterName: "prod"}, rule.LabelSelector.MatchLabels)
	_, err = Customize(&metacontroller.CustomizeRequest{})
	assert.Error(t, err)
}
