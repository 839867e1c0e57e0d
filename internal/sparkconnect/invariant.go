package sparkconnect

import (
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// checkServersKept is the invariant on a finished answer: every live server Pod observed is in
// the answer, unless the decision restarts the server for a spec change: the Pod of the
// submission the status names, or the one Kubeflow's operator made. It runs apart from
// the decision, so that a mistake there is refused (409) instead of deleting a server in use.
func checkServersKept(in *input, children []any, restarting bool) error {
	answered := map[string]bool{}
	for _, child := range children {
		kind, name, err := metacontroller.Identity(child)
		if err != nil {
			return err
		}
		if kind == "Pod" {
			answered[name] = true
		}
	}
	for _, pod := range in.pods {
		if !pod.live() || answered[pod.Metadata.Name] {
			continue
		}
		if restarting && (pod.submission() == in.sc.Status.SubmissionID && pod.submission() != "" || madeByKubeflow(in.sc, pod)) {
			continue
		}
		return metacontroller.Refusef(RefusedServerDropped,
			"SparkConnect %s/%s: the answer would delete the live server Pod %s without a spec change that ends it; keeping every child",
			in.sc.Namespace, in.sc.Name, pod.Metadata.Name)
	}
	return nil
}
