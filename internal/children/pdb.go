package children

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// driverPDB keeps voluntary evictions, node drains above all, away from the running driver, as
// Kubeflow's --enable-driver-pdb does: a drained driver takes the whole application with it,
// while executors are replaced by the driver. It is built when the application asks
// (spec.driverPodDisruptionBudget) and the controller registration declares
// PodDisruptionBudgets as children, which is the operator's switch. It selects the attempt's
// driver only, so it goes with the attempt.
func (b *builder) driverPDB() {
	if !b.opts.DriverPDBs || b.spec.DriverPodDisruptionBudget == nil || !*b.spec.DriverPodDisruptionBudget {
		return
	}
	one := intstr.FromInt32(1)
	b.objs.DriverPDB = &policyv1.PodDisruptionBudget{
		TypeMeta: metav1.TypeMeta{Kind: "PodDisruptionBudget", APIVersion: "policy/v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      b.driverPodName,
			Namespace: b.namespace(),
			Labels:    map[string]string{sparkpod.LabelLaunchedBy: "true", sparkpod.LabelAppName: b.app.Name},
		},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{
				sparkpod.LabelAppSelector: b.sub.AppID,
				sparkpod.LabelSparkRole:   sparkpod.RoleDriver,
			}},
		},
	}
}
