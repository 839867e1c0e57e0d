package sparkapp

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// syncBody runs the hook the way the HTTP handler does: decode the body, decide, encode.
func syncBody(b *testing.B, body []byte, now time.Time, cfg Config) {
	var req metacontroller.SyncRequest
	if err := metacontroller.DecodeSyncRequest(body, &req); err != nil {
		b.Fatal(err)
	}
	resp, _, err := Sync(&req, now, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := json.Marshal(resp); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkSyncNewApp(b *testing.B) {
	w := newWorld(b, sparkPi)
	body := coretest.MustJSON(b, w.request(false))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		syncBody(b, body, w.now, w.cfg)
	}
}

// runningBody is the sync request of a running application with n related executor Pods, each
// as the API server sends it (spec, status and managedFields).
func runningBody(b *testing.B, n int) ([]byte, *world) {
	w := newWorld(b, sparkPi)
	w.settle()
	w.driverRunning(true)
	w.settle()
	req := w.request(false)
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("spark-pi-%s-exec-%d", w.app.Status.SparkApplicationID[6:14], i)
		req.Related[keyPod][name] = realisticExecutor(b, name, w.app.Status.SparkApplicationID, i)
	}
	body, err := json.Marshal(req)
	if err != nil {
		b.Fatal(err)
	}
	return body, w
}

func BenchmarkSyncRunning(b *testing.B) {
	for _, n := range []int{0, 100, 1000} {
		v1, w := runningBody(b, n)
		// v2 is what Metacontroller sends the registration's sync hook: the same objects,
		// filed as <namespace>/<name>.
		for _, req := range []struct {
			version string
			body    []byte
		}{{"v1", v1}, {"v2", filedAsV2(b, v1)}} {
			body := req.body
			b.Run(fmt.Sprintf("executors=%d/request=%s", n, req.version), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					syncBody(b, body, w.now, w.cfg)
				}
			})
		}
	}
}

// filedAsV2 is a v1 sync request body with its children and related objects filed as a v2
// request files them: a namespaced object under "<namespace>/<name>".
func filedAsV2(b *testing.B, body []byte) []byte {
	b.Helper()
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		b.Fatal(err)
	}
	for _, field := range []string{"children", "related"} {
		var m metacontroller.ChildMap
		if err := json.Unmarshal(req[field], &m); err != nil {
			b.Fatal(err)
		}
		for key, group := range m {
			filed := make(map[string]json.RawMessage, len(group))
			for name, raw := range group {
				var obj metav1.PartialObjectMetadata
				if err := json.Unmarshal(raw, &obj); err != nil {
					b.Fatal(err)
				}
				if obj.Namespace != "" {
					name = obj.Namespace + "/" + name
				}
				filed[name] = raw
			}
			m[key] = filed
		}
		req[field] = coretest.MustJSON(b, m)
	}
	return coretest.MustJSON(b, req)
}

// BenchmarkSyncRunningUIRoute is BenchmarkSyncRunning/executors=0 with a UI HTTPRoute declared,
// asked for and observed: what the route adds to the sync of a running application.
func BenchmarkSyncRunningUIRoute(b *testing.B) {
	w := newWorld(b, sparkPi+uiRoute)
	httpRoutes(w)
	w.settle()
	w.driverRunning(true)
	w.settle()
	body := coretest.MustJSON(b, w.request(false))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		syncBody(b, body, w.now, w.cfg)
	}
}

// BenchmarkDecodeFloor decodes the same bodies into map[string]any and does nothing else: the
// cost any hook that reads its request at all must pay, which BenchmarkSyncRunning is
// compared against.
func BenchmarkDecodeFloor(b *testing.B) {
	for _, n := range []int{0, 100, 1000} {
		body, _ := runningBody(b, n)
		b.Run(fmt.Sprintf("executors=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var m map[string]any
				if err := json.Unmarshal(body, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func realisticExecutor(b testing.TB, name, appID string, id int) json.RawMessage {
	created := metav1.NewTime(time.Date(2026, 3, 8, 6, 1, 0, 0, time.UTC))
	pod := corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "spark-jobs", UID: types.UID(fmt.Sprintf("0b5c2d1e-5f7a-4c3b-9e1d-%012d", id)),
			ResourceVersion: fmt.Sprint(100000 + id), CreationTimestamp: created,
			Labels: map[string]string{
				sparkpod.LabelAppSelector: appID, sparkpod.LabelSparkRole: "executor", "spark-exec-id": fmt.Sprint(id),
				"spark-exec-resourceprofile-id": "0", sparkpod.LabelAppName: "spark-pi", sparkpod.LabelLaunchedBy: "true",
				sparkpod.LabelSubmissionID: "8e2f6a1c-3b4d-4e5f-8a9b-0c1d2e3f4a5b",
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "spark-pi-driver", UID: "d1", Controller: ptr(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "okhttp", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
					FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{".":{},"f:spark-app-name":{},"f:spark-app-selector":{},"f:spark-exec-id":{},"f:spark-exec-resourceprofile-id":{},"f:spark-role":{},"f:spark-version":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"d1\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"spark-kubernetes-executor\"}":{".":{},"f:args":{},"f:env":{".":{},"k:{\"name\":\"SPARK_APPLICATION_ID\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_DRIVER_URL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_EXECUTOR_CORES\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_EXECUTOR_ID\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_EXECUTOR_MEMORY\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":7079,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/var/data/spark-1\"}":{".":{},"f:mountPath":{},"f:name":{}}}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:hostname":{},"f:restartPolicy":{},"f:volumes":{".":{},"k:{\"name\":\"spark-local-dir-1\"}":{".":{},"f:emptyDir":{},"f:name":{}}}}}`)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.244.1.17\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)},
			},
		},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, EnableServiceLinks: ptr(false), Hostname: name, NodeName: "worker-3",
			ServiceAccountName: "spark", SchedulerName: "default-scheduler",
			Volumes: []corev1.Volume{{Name: "spark-local-dir-1", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{
				Name: "spark-kubernetes-executor", Image: "apache/spark:3.5.3", ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"executor"},
				Env: []corev1.EnvVar{
					{Name: "SPARK_USER", Value: "spark"}, {Name: "SPARK_DRIVER_URL", Value: "spark://CoarseGrainedScheduler@spark-pi-driver-svc.spark-jobs.svc:7078"},
					{Name: "SPARK_EXECUTOR_CORES", Value: "1"}, {Name: "SPARK_EXECUTOR_MEMORY", Value: "512m"},
					{Name: "SPARK_APPLICATION_ID", Value: appID}, {Name: "SPARK_EXECUTOR_ID", Value: fmt.Sprint(id)},
					{Name: "SPARK_EXECUTOR_POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
				},
				Ports: []corev1.ContainerPort{{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("896Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("896Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "spark-local-dir-1", MountPath: "/var/data/spark-1"}},
			}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "192.168.1.13", PodIP: "10.244.1.17", StartTime: &created, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "spark-kubernetes-executor", Ready: true, Image: "docker.io/apache/spark:3.5.3",
				ImageID:     "docker.io/apache/spark@sha256:6f0c3b4e1d2a5f7c8b9e0d1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c",
				ContainerID: "containerd://4b9e0d1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c6f0c3b4e1d2a5f7c",
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: created}},
			}},
		},
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}
