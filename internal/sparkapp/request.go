package sparkapp

import (
	"encoding/json"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// Child keys as Metacontroller sends them.
var (
	keyPod       = metacontroller.Key("Pod", "v1")
	keyConfigMap = metacontroller.Key("ConfigMap", "v1")
	keyService   = metacontroller.Key("Service", "v1")
	keyIngress   = metacontroller.Key("Ingress", "networking.k8s.io/v1")
	// keyPodGroup is declared only by the Volcano variant of the controller registration.
	keyPodGroup = metacontroller.Key("PodGroup", "scheduling.volcano.sh/v1beta1")
	// keyCoschedulingPodGroup is declared only by the scheduler-plugins variant.
	keyCoschedulingPodGroup = metacontroller.Key("PodGroup", "scheduling.x-k8s.io/v1alpha1")
	// keyPDB is declared only where the operator enables driver PodDisruptionBudgets.
	keyPDB = metacontroller.Key("PodDisruptionBudget", "policy/v1")
	// keyNetworkPolicy is declared where the operator builds Spark 4.2's executor NetworkPolicy.
	keyNetworkPolicy = metacontroller.Key("NetworkPolicy", "networking.k8s.io/v1")
	// keyHTTPRoute is declared where the operator builds Gateway API routes (gatewayAPI.enabled).
	keyHTTPRoute = metacontroller.Key("HTTPRoute", children.GatewayAPIVersion)
	keyGRPCRoute = metacontroller.Key("GRPCRoute", children.GatewayAPIVersion)
)

// childKeys are the child types whose presence delays a new attempt: a new attempt reuses the
// driver Pod and Service names, so the old ones must be gone first.
var childKeys = []string{keyPodGroup, keyCoschedulingPodGroup, keyPod, keyPDB, keyNetworkPolicy, keyConfigMap, keyService, keyIngress, keyHTTPRoute, keyGRPCRoute}

// requireDeletion refuses to finalize a parent that is not being deleted: Metacontroller never
// asks that, and the answer, no children, would delete every one of them.
func requireDeletion(app *v1beta2.SparkApplication) error {
	if app.DeletionTimestamp == nil {
		return metacontroller.RequestErrorf("finalizing SparkApplication %s/%s, which has no metadata.deletionTimestamp: only a parent being deleted is finalized", app.Namespace, app.Name)
	}
	return nil
}

// podView is the part of a Pod the decision reads. Decoding into it instead of corev1.Pod skips
// managedFields and the spec, which are most of the bytes of a thousand executor Pods.
type podView struct {
	Metadata struct {
		Name              string            `json:"name"`
		Labels            submissionLabel   `json:"labels"`
		Annotations       driverAnnotations `json:"annotations"`
		CreationTimestamp metav1.Time       `json:"creationTimestamp"`
		DeletionTimestamp *metav1.Time      `json:"deletionTimestamp"`
	} `json:"metadata"`
	Status corev1.PodStatus `json:"status"`
}

// driverAnnotations are the annotations the decision reads of a driver Pod; decoding only
// these, and only the submission label, spares a map entry for every other one on each sync.
// Struct tags cannot name the constants: a test holds the two together.
type driverAnnotations struct {
	LastApplied   string `json:"metacontroller.k8s.io/last-applied-configuration"`
	ExitException string `json:"spark.exit-exception"`
}

// serviceView is the part of a Service the status reports.
type serviceView struct {
	Spec struct {
		ClusterIP string `json:"clusterIP"`
	} `json:"spec"`
}

// input is a decoded sync request.
type input struct {
	app      *v1beta2.SparkApplication // as stored, status included
	specErrs field.ErrorList           // the parts of the stored spec that did not decode
	children metacontroller.ChildMap
	// drivers are every observed Pod child, sorted by name, whatever their labels say: the
	// driver is the only Pod a SparkApplication owns, and a label edited by a user or a policy
	// must not make the decision overlook it (and leave it out of the answer, which deletes it).
	drivers []*podView
	execs   []*executorPod // related executor Pods of any attempt, sorted by executor id
	// kubeflowDriver is the related Pod that status.driverInfo.podName names while the
	// attempt is one Kubeflow's operator submitted (kubeflowDriverRule), nil otherwise.
	kubeflowDriver *podView
	related        metacontroller.ChildMap
	// clusterRelated is true when the request carries cluster-scoped related objects: a v2 sync
	// hook's does, a v1 one's of a namespaced parent leaves them out.
	clusterRelated bool
	queue          *queue // nil unless the application is queued with Kueue
}

// decodeParent reads the parent. A spec that does not decode is the user's error, reported in
// the status like any invalid spec, so it comes back as field errors, not as a request error.
func decodeParent(raw json.RawMessage) (*v1beta2.SparkApplication, field.ErrorList, error) {
	return metacontroller.DecodeParent(raw, v1beta2.GroupVersion.WithKind(v1beta2.KindSparkApplication), true, v1beta2.DecodeSparkApplication)
}

func decodeRequest(req *metacontroller.SyncRequest) (*input, error) {
	if req == nil {
		return nil, metacontroller.RequestErrorf("empty request")
	}
	app, specErrs, err := decodeParent(req.Parent)
	if err != nil {
		return nil, err
	}
	return decodeObserved(req, app, specErrs)
}

// decodeObserved reads what req observed of parent app, decoded already: its children and
// related objects.
func decodeObserved(req *metacontroller.SyncRequest, app *v1beta2.SparkApplication, specErrs field.ErrorList) (*input, error) {
	if req.Finalizing {
		if err := requireDeletion(app); err != nil {
			return nil, err
		}
	}
	if err := req.TidyObserved(app.Namespace); err != nil {
		return nil, err
	}
	in := &input{app: app, specErrs: specErrs, children: req.Children, related: req.Related,
		clusterRelated: metacontroller.HookVersion(req.Controller, "sync") == "v2"}
	var err error
	if in.queue, err = newQueue(in); err != nil {
		return nil, err
	}
	for _, name := range req.Children.Names(keyPod) {
		pod := &podView{}
		if _, err := req.Children.Decode(keyPod, name, pod); err != nil {
			return nil, metacontroller.RequestErrorf("%w", err)
		}
		in.drivers = append(in.drivers, pod)
	}
	for name, raw := range req.Related[keyPod] {
		if _, child := req.Children[keyPod][name]; child {
			continue // a driver whose role label was edited to executor's
		}
		if name == app.Status.DriverInfo.PodName && submittedByKubeflow(&app.Status) {
			pod := &podView{}
			if err := json.Unmarshal(raw, pod); err != nil {
				return nil, metacontroller.RequestErrorf("decode related Pod %q: %w", name, err)
			}
			in.kubeflowDriver = pod
			continue
		}
		pod, err := decodeExecutor(raw)
		if err != nil {
			return nil, metacontroller.RequestErrorf("decode related Pod %q: %w", name, err)
		}
		if pod.role == sparkpod.RoleExecutor {
			in.execs = append(in.execs, pod)
		}
	}
	sort.Slice(in.execs, func(i, j int) bool { return executorLess(in.execs[i], in.execs[j]) })
	return in, nil
}

// executorLess orders executors by Spark's executor id, so that the capped executorState keeps
// the same, lowest-numbered executors from one sync to the next.
func executorLess(a, b *executorPod) bool {
	ia, erra := strconv.Atoi(a.execID)
	ib, errb := strconv.Atoi(b.execID)
	switch {
	case erra == nil && errb == nil && ia != ib:
		return ia < ib
	case erra == nil && errb != nil:
		return true
	case erra != nil && errb == nil:
		return false
	}
	return a.name < b.name
}

// observedCount is the number of observed children of the kinds a new attempt must wait for.
func (in *input) observedCount() int {
	n := 0
	for _, key := range childKeys {
		n += len(in.children[key])
	}
	return n
}

// serviceClusterIP reads the cluster IP of an observed Service, "" when absent or unreadable.
func (in *input) serviceClusterIP(name string) string {
	var svc serviceView
	if ok, err := in.children.Decode(keyService, name, &svc); !ok || err != nil {
		return ""
	}
	return svc.Spec.ClusterIP
}
