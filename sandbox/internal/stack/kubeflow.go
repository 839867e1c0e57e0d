package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/sparkimages"
)

// The Kubeflow Spark Operator's release and namespace, as its README installs it.
const (
	KubeflowRelease   = "spark-operator"
	KubeflowNamespace = "spark-operator"
)

// KubeflowOperator installs the Kubeflow Spark Operator's own chart in place of sparkhooks', so
// that the same cluster runs the same SparkApplications under the operator sparkhooks replaces.
// Its controller and webhook run as the chart's Pods on the process kubelet, from the image
// ghcr.io/kubeflow/spark-operator/controller:<appVersion>, which Options.ImageSource prepares
// (sandbox/internal/sparkimages); the chart's CRDs go in with it. Neither Metacontroller nor the
// stand-in runs. On a simulated node, whose pods run nothing, the controller and the webhook run
// as host processes instead (kubeflowhost.go), with a Spark distribution and Java for the
// controller's spark-submit.
type KubeflowOperator struct {
	// Chart is the chart's directory (with crds/); Set are --set arguments for its install.
	Chart string
	Set   []string
	// Binary is the release's spark-operator, and SparkHome and JavaHome the Spark distribution
	// and Java its spark-submit runs with (the operator image's /opt/spark and
	// /opt/java/openjdk), for host processes on a simulated node; unused otherwise.
	Binary, SparkHome, JavaHome string
}

// Name says what runs the applications, with the chart's version.
func (k *KubeflowOperator) Name() string {
	return "the Kubeflow Spark Operator " + chartAppVersion(k.Chart)
}

// Image is the image the chart runs, tagged with its appVersion as the chart tags it.
func (k *KubeflowOperator) Image() string {
	return sparkimages.KubeflowOperatorImage + ":" + chartAppVersion(k.Chart)
}

func (k *KubeflowOperator) check(o *Options) error {
	if _, err := os.Stat(filepath.Join(k.Chart, "Chart.yaml")); err != nil {
		return fmt.Errorf("the Kubeflow Spark Operator's chart: %w", err)
	}
	switch {
	case o.Simulated != nil:
		for _, f := range []string{k.Binary, filepath.Join(k.SparkHome, "bin", "spark-submit"), filepath.Join(k.JavaHome, "bin", "java")} {
			if _, err := os.Stat(f); f == "" || err != nil {
				return fmt.Errorf("stack: on a simulated node the Kubeflow Spark Operator runs as host processes, which need its binary, a Spark distribution and Java: %q is missing", f)
			}
		}
	case o.RealNode != "":
		return errors.New("stack: the Kubeflow Spark Operator runs on the process kubelet only: the real node runs the Spark images imported at its start, not the operator's")
	case o.Metacontroller != "" || o.OwnControllers:
		return errors.New("stack: the Kubeflow Spark Operator runs without Metacontroller or the caller's controllers")
	}
	return nil
}

// installKubeflow installs Kubeflow's chart, with its CRDs, and waits for its controller and
// webhook to be ready. Its webhook makes its own certificate and writes it into the chart's
// webhook configurations, which kube-apiserver then trusts. The chart's CRD upgrade hook, a Job
// running a kubectl image, is off by default (hook.upgradeCrd) and stays off: Helm installs the
// CRDs from crds/.
func (s *Stack) installKubeflow(ctx context.Context, k *KubeflowOperator, phase func(string)) error {
	for _, dir := range s.options.CRDs {
		if err := s.installCRDs(ctx, dir); err != nil {
			return err
		}
	}
	tolerations, err := tolerationsValue(s.options.NodeTaints, "controller.tolerations", "webhook.tolerations")
	if err != nil {
		return err
	}
	set := k.Set
	if s.options.Simulated != nil {
		// As sparkhooks' hook server there: no Pods, host processes in their place.
		set = append(slices.Clone(set), "controller.replicas=0", "webhook.replicas=0")
	}
	if err := s.helm.install(ctx, KubeflowRelease, k.Chart, KubeflowNamespace, installOptions{set: set, setJSON: tolerations, wait: true}); err != nil {
		return err
	}
	if s.options.Simulated != nil {
		if err := s.runKubeflowOnHost(ctx, k); err != nil {
			return err
		}
	}
	s.Controller, s.operator, s.kubeflow = k.Name(), OperatorKubeflow, k
	phase("the Kubeflow Spark Operator's chart is installed and its Pods are ready")
	return nil
}

// SetKubeflowValues upgrades the installed Kubeflow Spark Operator's release with --set-json
// key=value arguments on top of its current values, as SetChartValues does for sparkhooks'.
func (s *Stack) SetKubeflowValues(ctx context.Context, setJSON ...string) error {
	if s.operator != OperatorKubeflow {
		return fmt.Errorf("stack: the Kubeflow Spark Operator is not installed (%q is)", s.operator)
	}
	s.upgradeMu.Lock()
	defer s.upgradeMu.Unlock()
	return s.helm.upgrade(ctx, KubeflowRelease, s.kubeflow.Chart, KubeflowNamespace, setJSON, false)
}
