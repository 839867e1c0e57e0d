package children

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// executorNetworkPolicy is Spark's NetworkPolicyFeatureStep (Spark 4.2, SPARK-55653): from 4.2
// spark-submit creates, for every application, a policy that lets only the application's own
// pods reach its executors (their block managers serve shuffle data to anyone otherwise). We
// replace spark-submit, so we create it, for applications at 4.2 and later, when the controller
// registration declares NetworkPolicies as children (the operator's switch). Its selector names
// the attempt's application id, so it goes with the attempt.
func (b *builder) executorNetworkPolicy() {
	if !b.opts.NetworkPolicies || !b.version.atLeast(4, 2) {
		return
	}
	if b.excludesFeatureStep(networkPolicyFeatureStep) {
		return
	}
	appID := b.sub.AppID
	b.objs.NetworkPolicy = &networkingv1.NetworkPolicy{
		TypeMeta: metav1.TypeMeta{Kind: "NetworkPolicy", APIVersion: "networking.k8s.io/v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      boundedName(b.app.Name, "-policy", maxSubdomainName),
			Namespace: b.namespace(),
			Labels:    map[string]string{sparkpod.LabelAppSelector: appID, sparkpod.LabelLaunchedBy: "true", sparkpod.LabelAppName: b.app.Name},
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{
				sparkpod.LabelSparkRole:   sparkpod.RoleExecutor,
				sparkpod.LabelAppSelector: appID,
			}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{
					PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{sparkpod.LabelAppSelector: appID}},
				}},
			}},
		},
	}
}
