package sparkconnect

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// kubeflowMade puts the world as the Kubeflow Spark Operator (v2.5.2) leaves a ready server
// at a switch-over: its server Pod (a bash command, role connect-server, no submission), its
// ConfigMap and Service, all labelled for adoption (deploy/migrate/adopt-kubeflow-children.sh),
// and the status it wrote, with no submission.
func kubeflowMade(w *world) {
	name, ns, uid := w.sc.Name, w.sc.Namespace, string(w.sc.UID)
	owner := []any{map[string]any{"apiVersion": "sparkoperator.k8s.io/v1alpha1", "kind": "SparkConnect", "name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true}}
	meta := func(name string, labels map[string]any) map[string]any {
		labels[sparkpod.LabelControllerUID] = uid
		return map[string]any{"name": name, "namespace": ns, "uid": "kubeflow-" + name, "creationTimestamp": w.now.Format(time.RFC3339),
			"labels": labels, "ownerReferences": owner}
	}
	common := func() map[string]any {
		return map[string]any{"sparkoperator.k8s.io/created-by-spark-operator": "true", LabelConnectName: name}
	}
	selector := map[string]any{"sparkoperator.k8s.io/launched-by-spark-operator": "true", LabelConnectName: name,
		sparkpod.LabelSparkRole: RoleConnectServer, "spark-version": "4.0.1"}
	podLabels := map[string]any{}
	for k, v := range selector {
		podLabels[k] = v
	}
	w.children[keyPod] = map[string]map[string]any{name + "-server": {
		"apiVersion": "v1", "kind": "Pod", "metadata": meta(name+"-server", podLabels),
		"spec": map[string]any{"serviceAccountName": "spark", "containers": []any{map[string]any{
			"name": "spark-kubernetes-driver", "image": "apache/spark:4.0.1", "command": []any{"bash", "-c"},
			"args": []any{"${SPARK_HOME}/sbin/start-connect-server.sh --master k8s://https://kubernetes.default.svc.cluster.local:443"},
		}}},
		"status": map[string]any{"phase": "Running", "podIP": "10.1.2.9",
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": w.now.Format(time.RFC3339)}}},
	}}
	w.children[keyConfigMap] = map[string]map[string]any{name + "-conf": {
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(name+"-conf", common()),
		"data": map[string]any{"executor-pod-template.yaml": "metadata: {}\nspec:\n  containers: null\n"},
	}}
	w.children[keyService] = map[string]map[string]any{name + "-server": {
		"apiVersion": "v1", "kind": "Service", "metadata": meta(name+"-server", common()),
		"spec": map[string]any{"selector": selector, "clusterIP": "10.96.0.20", "ports": []any{
			map[string]any{"name": "spark-connect-server", "port": 15002, "targetPort": 15002, "protocol": "TCP", "appProtocol": "grpc"},
		}},
	}}
	w.sc.Status = v1alpha1.SparkConnectStatus{
		State: v1alpha1.StateReady,
		Conditions: []metav1.Condition{{Type: condServerPodReady, Status: metav1.ConditionTrue, Reason: "ServerPodReady",
			Message: "Server pod is ready", LastTransitionTime: metav1.NewTime(w.now)}},
		Server:    v1alpha1.SparkConnectServerStatus{PodName: name + "-server", PodIP: "10.1.2.9", ServiceName: name + "-server"},
		Executors: map[string]int{"running": 2},
		StartTime: metav1.NewTime(w.now), LastUpdateTime: metav1.NewTime(w.now),
	}
	w.addExecutors("Running", "Running")
	w.advance(time.Minute)
}

// kubeflowReleased: the administrator did not label the server Pod, so Metacontroller released
// it; the hook sees it as a related object by its name.
func kubeflowReleased(w *world) {
	pod := w.children[keyPod][w.sc.Name+"-server"]
	delete(w.children[keyPod], w.sc.Name+"-server")
	delete(pod["metadata"].(map[string]any)["labels"].(map[string]any), sparkpod.LabelControllerUID)
	delete(pod["metadata"].(map[string]any), "ownerReferences")
	w.execs[w.sc.Name+"-server"] = pod
}

func kubeflowReleasedExited(w *world) {
	w.execs[w.sc.Name+"-server"]["status"] = map[string]any{"phase": "Failed", "reason": "Error"}
}

// TestFollowsKubeflowServer: a server Kubeflow's operator made is followed without a restart
// for as long as it runs on the spec it was adopted with, children byte-stable; a spec edit
// restarts it as a server of sparkhooks, and the Adopted condition goes with it.
func TestFollowsKubeflowServer(t *testing.T) {
	w := newWorld(t, connectYAML)
	kubeflowMade(w)
	uid := w.serverPod()["metadata"].(map[string]any)["uid"]
	w.settle()
	first := w.last
	assert.Equal(t, v1alpha1.StateReady, w.sc.Status.State)
	c := meta.FindStatusCondition(w.sc.Status.Conditions, condAdopted)
	require.NotNil(t, c)
	assert.Equal(t, ReasonKubeflowServerAdopted, c.Reason)
	assert.Empty(t, w.sc.Status.SubmissionID)
	for range 3 {
		w.advance(time.Minute)
		require.NoError(t, w.sync())
		assert.Equal(t, first.Children, w.last.Children, "the children of a followed server change")
		assert.Equal(t, uid, w.serverPod()["metadata"].(map[string]any)["uid"])
	}

	imageEdit(w)
	require.NoError(t, w.sync())
	assert.Nil(t, w.children[keyPod][v1alpha1.ServerPodName(w.sc)], "the spec changed: Kubeflow's server goes")
	w.settle()
	w.advance(20 * time.Second)
	w.serverRunning(true)
	w.settle()
	assert.Equal(t, v1alpha1.StateReady, w.sc.Status.State)
	assert.NotEmpty(t, w.sc.Status.SubmissionID)
	assert.Nil(t, meta.FindStatusCondition(w.sc.Status.Conditions, condAdopted))
	assert.Equal(t, sparkpod.RoleDriver, w.serverPod()["metadata"].(map[string]any)["labels"].(map[string]any)[sparkpod.LabelSparkRole])
}

// TestNeverDeletesReleasedKubeflowServer: a released server is followed, and while it holds
// the server's name no server of sparkhooks is asked for, even after it ended or the spec
// changed; deleted, it gives way to one.
func TestNeverDeletesReleasedKubeflowServer(t *testing.T) {
	w := newWorld(t, connectYAML)
	kubeflowMade(w)
	kubeflowReleased(w)
	require.NoError(t, w.sync())
	c := meta.FindStatusCondition(w.sc.Status.Conditions, condAdopted)
	require.NotNil(t, c)
	assert.Equal(t, ReasonKubeflowServerNotOwned, c.Reason)
	assert.Equal(t, v1alpha1.StateReady, w.sc.Status.State)
	for _, step := range []func(*world){imageEdit, kubeflowReleasedExited} {
		step(w)
		require.NoError(t, w.sync())
		assert.Empty(t, w.children[keyPod], "a server of sparkhooks asked for while Kubeflow's holds its name")
	}
	assert.Equal(t, v1alpha1.StateNotReady, w.sc.Status.State)
	delete(w.execs, w.sc.Name+"-server")
	w.settle()
	assert.NotNil(t, w.serverPod())
	assert.NotEmpty(t, w.sc.Status.SubmissionID)
}
