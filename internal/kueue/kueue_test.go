package kueue

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func observe(t *testing.T, status string) *Observed {
	t.Helper()
	o, err := Observe([]byte(`{"metadata":{"name":"w","annotations":{"sparkoperator.k8s.io/spec-hash":"h"}},
		"spec":{"queueName":"q","podSets":[{"name":"driver","count":1},{"name":"executor","count":4}]},"status":` + status + `}`))
	require.NoError(t, err)
	return o
}

const admittedStatus = `{"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"ok"},
	{"type":"Admitted","status":"True","reason":"Admitted","message":"ok"}],
	"admission":{"clusterQueue":"cq","podSetAssignments":[
		{"name":"driver","flavors":{"cpu":"a","memory":"b"},"count":1},
		{"name":"executor","flavors":{"cpu":"a","memory":"a"},"count":2}]},
	"admissionChecks":[{"name":"check","state":"Ready","message":"","podSetUpdates":[
		{"name":"executor","labels":{"l":"v"},"annotations":{"an":"v"},"nodeSelector":{"zone":"z1"},
		 "tolerations":[{"key":"t","operator":"Exists"}]}]}]}`

func TestObservedStates(t *testing.T) {
	for _, tt := range []struct {
		name              string
		status            string
		admitted, spent   bool
		reason, msgSubstr string
	}{
		{"new", `{}`, false, false, "Pending", "waiting for Kueue"},
		{"no quota", `{"conditions":[{"type":"QuotaReserved","status":"False","reason":"Pending","message":"insufficient unused quota"}]}`,
			false, false, "Pending", "insufficient unused quota"},
		{"quota reserved, checks pending", `{"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved"},
			{"type":"Admitted","status":"False","reason":"UnsatisfiedAdmissionChecks","message":"checks pending"}]}`,
			false, false, "UnsatisfiedAdmissionChecks", "checks pending"},
		{"admitted", admittedStatus, true, false, "", ""},
		{"evicted", strings.Replace(admittedStatus, `"conditions":[`, `"conditions":[{"type":"Evicted","status":"True","reason":"Preempted","message":"preempted"},`, 1),
			false, true, "Preempted", "preempted"},
		{"finished", strings.Replace(admittedStatus, `"conditions":[`, `"conditions":[{"type":"Finished","status":"True","reason":"Succeeded","message":"done"},`, 1),
			false, true, "Succeeded", "done"},
		{"admitted without admission", `{"conditions":[{"type":"Admitted","status":"True","reason":"Admitted"}]}`, false, false, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := observe(t, tt.status)
			assert.Equal(t, tt.admitted, o.Admitted())
			assert.Equal(t, tt.spent, o.Spent())
			if tt.reason != "" {
				reason, msg := o.Message()
				assert.Equal(t, tt.reason, reason)
				assert.Contains(t, msg, tt.msgSubstr)
			}
		})
	}
}

func TestPlacementAndAdmission(t *testing.T) {
	o := observe(t, admittedStatus)
	flavors := map[string]json.RawMessage{
		"a":  json.RawMessage(`{"metadata":{"name":"a"},"spec":{"nodeLabels":{"pool":"a"},"tolerations":[{"key":"a","operator":"Exists","effect":"NoSchedule"}]}}`),
		"/b": json.RawMessage(`{"metadata":{"name":"b"},"spec":{"nodeLabels":{"disk":"ssd"}}}`),
	}
	spec := &v1beta2.SparkApplicationSpec{DynamicAllocation: &v1beta2.DynamicAllocation{Enabled: true, MaxExecutors: ptr(int32(4)), MinExecutors: ptr(int32(1))}}
	spec.Driver.NodeSelector = map[string]string{"team": "x"}
	shared := spec.Driver.NodeSelector
	require.NoError(t, ApplyAdmission(o, flavors, spec))
	assert.Equal(t, map[string]string{"team": "x", "pool": "a", "disk": "ssd"}, spec.Driver.NodeSelector, "both flavors of the driver, over the spec's own")
	assert.Equal(t, map[string]string{"team": "x"}, shared, "the decoded spec's map is not written through")
	assert.Equal(t, map[string]string{"pool": "a", "zone": "z1"}, spec.Executor.NodeSelector, "the flavor, then the admission check's update")
	assert.Equal(t, []corev1.Toleration{{Key: "a", Operator: "Exists", Effect: "NoSchedule"}, {Key: "t", Operator: "Exists"}}, spec.Executor.Tolerations)
	assert.Equal(t, map[string]string{"l": "v"}, spec.Executor.Labels)
	assert.Equal(t, map[string]string{"an": "v"}, spec.Executor.Annotations)
	assert.Equal(t, int32(2), *spec.DynamicAllocation.MaxExecutors, "partial admission caps dynamic allocation")

	delete(flavors, "/b")
	err := ApplyAdmission(o, flavors, &v1beta2.SparkApplicationSpec{})
	var missing *MissingFlavorError
	require.True(t, errors.As(err, &missing), "%v", err)
	assert.Equal(t, "b", missing.Flavor)
}

func TestWorkloadName(t *testing.T) {
	assert.Equal(t, "sparkapplication-pi", WorkloadName("sparkapplication", "pi"))
	long := WorkloadName("sparkapplication", strings.Repeat("a", 253))
	assert.Len(t, long, 253)
	assert.NotEqual(t, long, WorkloadName("sparkapplication", strings.Repeat("a", 252)+"b"), "cut names stay apart")
}

func TestNewWorkloadPriority(t *testing.T) {
	podSets := []PodSet{{Name: PodSetDriver, Count: 1}}
	podSets[0].Template.Spec.PriorityClassName = "high"
	_, err := NewWorkload(metaNamed("w"), "h", "q", podSets, nil)
	assert.ErrorContains(t, err, "PriorityClass high")
	w, err := NewWorkload(metaNamed("w"), "h", "q", podSets, map[string]json.RawMessage{"/high": json.RawMessage(`{"value":1000}`)})
	require.NoError(t, err)
	assert.Equal(t, int32(1000), *w.Spec.Priority)
	assert.Equal(t, &PriorityClassRef{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: "high"}, w.Spec.PriorityClassRef)
	assert.Equal(t, "h", w.Metadata.Annotations[AnnotationSpecHash])
}

func TestQueueNameProblem(t *testing.T) {
	assert.Empty(t, QueueNameProblem("team-a"))
	assert.NotEmpty(t, QueueNameProblem("Team_A"))
}

func ptr[T any](v T) *T { return &v }

func metaNamed(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }
