package stack

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/kubectl"
)

// Operator names what runs the cluster's SparkApplications.
type Operator string

// The operators a stack runs, one at a time, and none between two of them.
const (
	OperatorNone       Operator = ""
	OperatorSparkhooks Operator = "sparkhooks"
	OperatorKubeflow   Operator = "kubeflow"
)

// Operator says which operator is installed now.
func (s *Stack) Operator() Operator { return s.operator }

// UninstallOperator removes the installed operator as an administrator hands a cluster over:
// helm uninstall of its chart (sparkhooks' with Metacontroller's), which takes its webhooks,
// controllers and RBAC, and keeps the CRDs and every SparkApplication with its Pods.
func (s *Stack) UninstallOperator(ctx context.Context) error {
	switch s.operator {
	case OperatorNone:
		return errors.New("stack: no operator is installed")
	case OperatorSparkhooks:
		if s.options.OwnControllers || s.options.Metacontroller == "" {
			return errors.New("stack: only sparkhooks run by Metacontroller is uninstalled here")
		}
		// Metacontroller first: with its controllers gone, nothing acts on an application
		// while sparkhooks' webhooks go. On a simulated node the charts' Pods are host
		// processes, which go with them.
		if s.metacontroller != nil {
			s.metacontroller.end(10 * time.Second)
			s.metacontroller = nil
		}
		if err := s.helm.uninstall(ctx, "metacontroller", MetacontrollerNamespace); err != nil {
			return err
		}
		if err := s.helm.uninstall(ctx, "sparkhooks", SparkhooksNamespace); err != nil {
			return err
		}
		if s.hooks != nil {
			s.hooks.end(10 * time.Second)
			s.hooks, s.HookServer = nil, ""
		}
	case OperatorKubeflow:
		if err := s.helm.uninstall(ctx, KubeflowRelease, KubeflowNamespace); err != nil {
			return err
		}
		for _, c := range s.kubeflowOnHost {
			c.end(10 * time.Second)
		}
		s.kubeflowOnHost = nil
	}
	s.operator, s.Controller, s.kubeflow = OperatorNone, "", nil
	return nil
}

// InstallKubeflow installs the Kubeflow Spark Operator's chart where no operator is installed:
// its CRDs applied over the ones the cluster serves (Helm leaves existing CRDs alone), then
// the chart. Its image comes from Options.ImageSource, as at Start.
func (s *Stack) InstallKubeflow(ctx context.Context, k *KubeflowOperator) error {
	if s.operator != OperatorNone {
		return fmt.Errorf("stack: %s is installed: uninstall it first", s.operator)
	}
	o := s.options
	o.Kubeflow, o.Metacontroller, o.OwnControllers = k, "", false
	if err := k.check(&o); err != nil {
		return err
	}
	if err := s.applyCRDsOver(ctx, filepath.Join(k.Chart, "crds")); err != nil {
		return err
	}
	return s.installKubeflow(ctx, k, s.phase)
}

// InstallSparkhooks installs sparkhooks' chart and Metacontroller's again, with the values of
// Start, where no operator is installed: sparkhooks' CRDs applied over the ones the cluster
// serves, then both charts, and it returns once Metacontroller has started every controller.
func (s *Stack) InstallSparkhooks(ctx context.Context) error {
	if s.operator != OperatorNone {
		return fmt.Errorf("stack: %s is installed: uninstall it first", s.operator)
	}
	o := s.options
	if o.Kubeflow != nil || o.OwnControllers || o.Metacontroller == "" || o.Simulated != nil || o.RealNode != "" {
		return errors.New("stack: sparkhooks is installed again only on a stack started with it, Metacontroller and the process kubelet")
	}
	since := time.Now()
	if err := s.applyCRDsOver(ctx, filepath.Join(o.Chart, "crds")); err != nil {
		return err
	}
	tolerations, err := tolerationsValue(o.NodeTaints, "tolerations")
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(s.Admin)
	if err != nil {
		return err
	}
	sparkhooks := installOptions{set: o.ChartSet, setJSON: tolerations, wait: true, skipCRDs: true}
	install := make(chan error, 1)
	go func() { install <- s.helm.install(ctx, "sparkhooks", o.Chart, SparkhooksNamespace, sparkhooks) }()
	metacontrollerErr := s.installMetacontroller(ctx, o, s.helm, tolerations)
	if err := errors.Join(<-install, metacontrollerErr); err != nil {
		return err
	}
	if err := s.waitForControllers(ctx, client, since); err != nil {
		return err
	}
	s.Controller, s.operator = "Metacontroller "+chartAppVersion(o.MetacontrollerChart), OperatorSparkhooks
	s.phase("sparkhooks' chart is installed and Metacontroller runs its controllers")
	return nil
}

// applyCRDsOver applies the CRDs in dir server-side, taking their fields over from whoever
// applied them before (the other operator's chart), and waits until they are established.
func (s *Stack) applyCRDsOver(ctx context.Context, dir string) error {
	if out, err := kubectl.Run(ctx, s.Kubeconfig, "apply", "--server-side", "--force-conflicts", "-f", dir); err != nil {
		return fmt.Errorf("applying the CRDs in %s: %w: %s", dir, err, out)
	}
	if out, err := kubectl.Run(ctx, s.Kubeconfig, "wait", "--for=condition=Established", "--timeout=60s", "-f", dir); err != nil {
		return fmt.Errorf("the CRDs in %s are not established: %w: %s", dir, err, out)
	}
	return nil
}

// phase logs a step of an install after Start.
func (s *Stack) phase(what string) { s.options.Logf("stack: %s", what) }
