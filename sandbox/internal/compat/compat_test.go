package compat

import (
	"encoding/json"
	"reflect"
	"testing"
)

func mustObject(t *testing.T, text string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestFlatten(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"keys with dots or slashes in brackets", `{"labels":{"spark-role":"driver","sparkoperator.k8s.io/app-name":"pi"}}`,
			map[string]string{"labels.spark-role": "driver", "labels[sparkoperator.k8s.io/app-name]": "pi"}},
		{"named items by name", `{"env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}]}`,
			map[string]string{"env[A].name": "A", "env[A].value": "1", "env[B].name": "B", "env[B].valueFrom.fieldRef.fieldPath": "status.podIP"}},
		{"scalar lists as one value", `{"args":["driver","--class","Pi"],"n":1,"b":true,"z":null}`,
			map[string]string{"args": `["driver","--class","Pi"]`, "n": "1", "b": "true", "z": "null"}},
		{"unnamed or duplicate-named items by index", `{"ports":[{"port":1},{"port":2}],"m":[{"name":"a"},{"name":"a","x":1}]}`,
			map[string]string{"ports[0].port": "1", "ports[1].port": "2", "m[0].name": "a", "m[1].name": "a", "m[1].x": "1"}},
		{"empty maps and lists as absent", `{"labels":{},"args":[],"spec":{"x":"y"}}`,
			map[string]string{"spec.x": "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Flatten(mustObject(t, tt.in)); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Flatten(%s) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	in := mustObject(t, `{"metadata":{"name":"spark-pi-3f2a9c8d7e6b5a41-exec-1","labels":{"a":"spark-pi-703b0173","b":"pi-fb92690813-conf","c":"abc-1234567"},"uid":"0d1c5b2e-8a3f-4e6d-9c7b-1a2b3c4d5e6f","resourceVersion":"42","creationTimestamp":"2026-12-07T10:00:00Z","generation":1,"managedFields":[]},
		"spec":{"volumes":[{"name":"kube-api-access-x7k2p"},{"name":"spark-conf","configMap":{"name":"spark-drv-3f2a9c8d7e6b5a41-conf-map"}}],
		"containers":[{"env":[{"name":"SPARK_APPLICATION_ID","value":"spark-0123456789abcdef0123456789abcdef"},{"name":"IP","value":"10.219.201.7"},{"name":"T","value":"1765101600123"}]}]},
		"status":{"lastSubmissionAttemptTime":"2026-12-07T10:00:00.123456Z"}}`)
	got, err := Normalize(in)
	if err != nil {
		t.Fatal(err)
	}
	want := mustObject(t, `{"metadata":{"name":"spark-pi-<hash>-exec-1","labels":{"a":"spark-pi-<hash>","b":"pi-<hash>-conf","c":"abc-1234567"}},
		"spec":{"volumes":[{"name":"kube-api-access-<random>"},{"name":"spark-conf","configMap":{"name":"spark-drv-<hash>-conf-map"}}],
		"containers":[{"env":[{"name":"SPARK_APPLICATION_ID","value":"spark-<app-id>"},{"name":"IP","value":"<ip>"},{"name":"T","value":"<epoch-ms>"}]}]},
		"status":{"lastSubmissionAttemptTime":"<time>"}}`)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("Normalize:\n got %s\nwant %s", g, w)
	}
}

func TestCompare(t *testing.T) {
	pod := func(name, label, image string) map[string]any {
		return mustObject(t, `{"metadata":{"name":"`+name+`","uid":"u-`+name+`","labels":{"spark-role":"`+label+`"},
			"ownerReferences":[{"kind":"SparkApplication","name":"pi","uid":"u1"}]},"spec":{"containers":[{"name":"spark","image":"`+image+`"}]},"status":{"phase":"Running"}}`)
	}
	kubeflow := Capture{
		States:     []string{"SUBMITTED", "RUNNING", "SUCCEEDING", "COMPLETED"},
		Status:     mustObject(t, `{"applicationState":{"state":"COMPLETED"},"submissionAttempts":1,"driverInfo":{"podName":"pi-driver"}}`),
		Driver:     pod("pi-driver", "driver", "spark:4"),
		Executor:   pod("pi-0123456789abcdef-exec-1", "executor", "spark:4"),
		Properties: map[string]string{"spark.app.name": "pi", "spark.kubernetes.submission.waitAppCompletion": "false"},
		Services: []map[string]any{mustObject(t, `{"metadata":{"name":"pi-ui-svc"},"spec":{"ports":[{"name":"spark-driver-ui-port","port":4040}]}}`),
			mustObject(t, `{"metadata":{"name":"pi-0123456789abcdef-driver-svc"},"spec":{"clusterIP":"None"}}`)},
	}
	sparkhooks := Capture{
		States:     []string{"SUBMITTED", "RUNNING", "COMPLETED"},
		Status:     mustObject(t, `{"applicationState":{"state":"COMPLETED"},"submissionAttempts":1,"driverInfo":{"podName":"pi-driver"},"conditions":[{"type":"DriverReady"}]}`),
		Driver:     pod("pi-driver", "driver", "spark:4"),
		Executor:   pod("pi-fedcba9876543210-exec-1", "executor", "spark:4.0"),
		Properties: map[string]string{"spark.app.name": "pi"},
		ConfigMaps: []map[string]any{mustObject(t, `{"metadata":{"name":"pi-conf"},"data":{"spark.properties":"x","template":"y"}}`)},
		Services:   []map[string]any{mustObject(t, `{"metadata":{"name":"pi-fedcba98-driver-svc"},"spec":{"clusterIP":"None","publishNotReadyAddresses":true}}`)},
	}
	got, err := Compare(kubeflow, sparkhooks)
	if err != nil {
		t.Fatal(err)
	}
	want := []Difference{
		{Object: "configmap pi-conf", Kubeflow: Absent, Sparkhooks: "present"},
		{Object: "executor pod", Field: "spec.containers[spark].image", Kubeflow: "spark:4", Sparkhooks: "spark:4.0"},
		{Object: "properties", Field: "spark.kubernetes.submission.waitAppCompletion", Kubeflow: "false", Sparkhooks: Absent},
		{Object: "service <driver-svc>", Field: "spec.publishNotReadyAddresses", Kubeflow: Absent, Sparkhooks: "true"},
		{Object: "service pi-ui-svc", Kubeflow: "present", Sparkhooks: Absent},
		{Object: "states", Field: "sequence", Kubeflow: "SUBMITTED RUNNING SUCCEEDING COMPLETED", Sparkhooks: "SUBMITTED RUNNING COMPLETED"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Compare:\n got %v\nwant %v", got, want)
	}
	// sparkhooks' own status fields (conditions) are no difference; a status field Kubeflow
	// fills and sparkhooks lacks is one.
	sparkhooks.Status = mustObject(t, `{"applicationState":{"state":"COMPLETED"},"driverInfo":{"podName":"pi-driver"}}`)
	got, _ = Compare(kubeflow, sparkhooks)
	found := false
	for _, d := range got {
		if d.Object == "status" {
			if d != (Difference{Object: "status", Field: "submissionAttempts", Kubeflow: "1", Sparkhooks: Absent}) {
				t.Errorf("unexpected status difference %v", d)
			}
			found = true
		}
	}
	if !found {
		t.Errorf("no status difference for submissionAttempts in %v", got)
	}
}

func TestParseProperties(t *testing.T) {
	text := "#Spark configuration\n#Mon Dec 07 10:00:00 UTC 2026\n" +
		"spark.master=k8s\\://https\\://10.0.0.1\\:443\n" +
		"spark.app.name = spark-pi\n" +
		"spark.driver.extraJavaOptions=-Dx\\=y -Dz\n" +
		"spark.kubernetes.driver.label.version: 4.0.0\n" +
		"! comment\n" +
		"spark.x=caf\\u00e9\\ttab\n" +
		"empty\n"
	want := map[string]string{
		"spark.master":                          "k8s://https://10.0.0.1:443",
		"spark.app.name":                        "spark-pi",
		"spark.driver.extraJavaOptions":         "-Dx=y -Dz",
		"spark.kubernetes.driver.label.version": "4.0.0",
		"spark.x":                               "café\ttab",
		"empty":                                 "",
	}
	if got := ParseProperties(text); !reflect.DeepEqual(got, want) {
		t.Errorf("ParseProperties = %v, want %v", got, want)
	}
}
