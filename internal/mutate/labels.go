package mutate

import (
	"strings"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// Key prefixes of the Kubeflow operator and of Metacontroller.
const (
	prefixSparkOperator  = "sparkoperator.k8s.io/"
	prefixMetacontroller = "metacontroller.k8s.io/"
)

// reservedKey reports the label and annotation keys a policy rule may not set: OwnedLabel's,
// and everything in the Kubeflow operator's and Metacontroller's namespaces, where the hooks
// keep their bookkeeping (the pod-customization annotation, Metacontroller's last-applied
// configuration). Application labels in the operator's namespace, such as a scheduled run's
// sparkoperator.k8s.io/scheduled-app-name, still reach the pods through the sync hook.
func reservedKey(key string) bool {
	return sparkpod.OwnedLabel(key) || strings.HasPrefix(key, prefixSparkOperator) || strings.HasPrefix(key, prefixMetacontroller)
}
