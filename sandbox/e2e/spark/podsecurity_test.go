//go:build e2e

package spark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// restrictedExamples are the examples whose pods the restricted Pod Security Standard admits.
// The others leave the security context to the cluster's defaults (docs/install.md).
var restrictedExamples = []string{"spark-pi-restricted.yaml"}

// TestPodSecurity puts the pods of every example SparkApplication (the driver as the hook builds
// it, an executor as its template says) through the API server's PodSecurity admission, with a
// server-side dry run in namespaces that enforce the baseline and the restricted standard. Every
// example must pass baseline, so job namespaces can enforce it; the ones that pass restricted
// are listed above.
func TestPodSecurity(t *testing.T) {
	ctx := context.Background()
	core, err := kubernetes.NewForConfig(shared.stack.Admin)
	if err != nil {
		t.Fatal(err)
	}
	namespaces := map[string]string{}
	for _, level := range []string{"baseline", "restricted"} {
		name := "pss-" + level + "-" + rand.String(5)
		if err := shared.stack.AddJobNamespace(ctx, name, map[string]string{podSecurityEnforce: level}); err != nil {
			t.Fatal(err)
		}
		// Kept, as every test's namespace: the release's job namespaces must exist.
		namespaces[level] = name
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var restricted []string
	for _, file := range files {
		example := filepath.Base(file)
		pods, err := examplePods(file)
		if err != nil {
			t.Fatalf("%s: %v", example, err)
		}
		if len(pods) == 0 {
			continue
		}
		passesRestricted := true
		for _, level := range []string{"baseline", "restricted"} {
			for _, pod := range pods {
				pod := pod.DeepCopy()
				pod.Namespace = namespaces[level]
				pod.OwnerReferences = nil
				_, err := core.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				switch {
				case err == nil:
				case level == "baseline":
					t.Errorf("%s: pod %s is refused under baseline: %v", example, pod.Name, err)
				default:
					passesRestricted = false
					t.Logf("%s: pod %s is refused under restricted: %v", example, pod.Name, err)
				}
			}
		}
		if passesRestricted {
			restricted = append(restricted, example)
		}
	}
	if !slices.Equal(restricted, restrictedExamples) {
		t.Errorf("examples admitted under restricted: %v, want %v", restricted, restrictedExamples)
	}
}

// examplePods renders the SparkApplication in file with the hook server's render command and
// returns its driver Pod and, where it has an executor template (Spark 3 and later), an executor
// Pod made from it.
func examplePods(file string) ([]*corev1.Pod, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &kind); err != nil || kind.Kind != "SparkApplication" {
		return nil, nil
	}
	var stderr bytes.Buffer
	cmd := exec.Command(shared.binary, "render", "-f", file)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("sparkhooks render: %w: %s", err, stderr.String())
	}
	var rendered struct {
		Children []json.RawMessage `json:"children"`
	}
	if err := yaml.Unmarshal(out, &rendered); err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	var driverImage string
	var template *corev1.Pod
	for _, raw := range rendered.Children {
		var meta metav1.TypeMeta
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, err
		}
		switch meta.Kind {
		case "Pod":
			pod := &corev1.Pod{}
			if err := json.Unmarshal(raw, pod); err != nil {
				return nil, err
			}
			pods = append(pods, pod)
			driverImage = pod.Spec.Containers[0].Image
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			if err := json.Unmarshal(raw, cm); err != nil {
				return nil, err
			}
			if text, ok := cm.Data["executor-pod-template.json"]; ok {
				template = &corev1.Pod{}
				if err := json.Unmarshal([]byte(text), template); err != nil {
					return nil, fmt.Errorf("the executor template: %w", err)
				}
			}
		}
	}
	if len(pods) == 0 {
		return nil, errors.New("no driver Pod")
	}
	if template == nil {
		return pods, nil
	}
	// Spark fills in what the template leaves out: the name, and the image of the container it
	// runs the executor in (the first, unless spark.kubernetes.executor.podTemplateContainerName
	// names another).
	template.Name = strings.TrimSuffix(pods[0].Name, "-driver") + "-exec-1"
	for i := range template.Spec.Containers {
		if template.Spec.Containers[i].Image == "" {
			template.Spec.Containers[i].Image = driverImage
		}
	}
	return append(pods, template), nil
}

// TestRestrictedNamespaceRunsSparkPi runs the restricted example in a job namespace that
// enforces restricted: the API server admits the driver the hook builds and the executors the
// driver creates from the template.
func TestRestrictedNamespaceRunsSparkPi(t *testing.T) {
	n := newNamespaceWithLabels(t, "restricted", map[string]string{podSecurityEnforce: "restricted"})
	n.applyExample("spark-pi-restricted.yaml")
	n.waitCompleted("spark-pi-restricted", 4*time.Minute)
	if log := n.logs("spark-pi-restricted-driver", ""); !strings.Contains(log, "Pi is roughly 3.1") {
		t.Errorf("no Pi line in the driver's log:\n%s", harness.Tail(log, 20))
	}
}
