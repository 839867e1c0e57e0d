package sparkconnect

import (
	"encoding/json"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// Child keys as Metacontroller sends them.
var (
	keyPod       = metacontroller.Key("Pod", "v1")
	keyConfigMap = metacontroller.Key("ConfigMap", "v1")
	keyService   = metacontroller.Key("Service", "v1")
	// keyHTTPRoute and keyGRPCRoute: the Gateway API routes, declared where the operator builds
	// them (gatewayAPI.enabled).
	keyHTTPRoute = metacontroller.Key("HTTPRoute", children.GatewayAPIVersion)
	keyGRPCRoute = metacontroller.Key("GRPCRoute", children.GatewayAPIVersion)
	childKeys    = []string{keyPod, keyConfigMap, keyService, keyHTTPRoute, keyGRPCRoute}
)

// podView is what the decision reads of a Pod.
type podView struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Status   corev1.PodStatus  `json:"status"`
}

func (p *podView) submission() string { return p.Metadata.Labels[sparkpod.LabelSubmissionID] }

// live is true for a Pod that runs or may still run: not terminated, not being deleted.
func (p *podView) live() bool {
	return p.Metadata.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func (p *podView) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// input is a decoded request.
type input struct {
	sc       *v1alpha1.SparkConnect
	specErrs field.ErrorList
	children metacontroller.ChildMap
	pods     []*podView // the observed Pod children, by name
	execs    []*podView // the related executor Pods
	// releasedServer is the related Pod of the server's name that is not a child: one
	// Kubeflow's operator made, which Metacontroller released (kubeflowServerRule).
	releasedServer *podView
	queue          *queue // nil unless queued with Kueue
}

func decodeRequest(req *metacontroller.SyncRequest) (*input, error) {
	if req == nil {
		return nil, metacontroller.RequestErrorf("empty request")
	}
	sc, specErrs, err := decodeParent(req.Parent)
	if err != nil {
		return nil, err
	}
	if req.Finalizing && sc.DeletionTimestamp == nil {
		return nil, metacontroller.RequestErrorf("finalizing request for SparkConnect %s/%s, which has no metadata.deletionTimestamp: only a parent being deleted is finalized", sc.Namespace, sc.Name)
	}
	if err := req.TidyObserved(sc.Namespace); err != nil {
		return nil, err
	}
	in := &input{sc: sc, specErrs: specErrs, children: req.Children}
	for _, name := range req.Children.Names(keyPod) {
		pod := &podView{}
		if _, err := req.Children.Decode(keyPod, name, pod); err != nil {
			return nil, metacontroller.RequestErrorf("%w", err)
		}
		in.pods = append(in.pods, pod)
	}
	for name, raw := range req.Related[keyPod] {
		if _, child := req.Children[keyPod][name]; child {
			continue
		}
		pod := &podView{}
		if err := json.Unmarshal(raw, pod); err != nil {
			return nil, metacontroller.RequestErrorf("decode related Pod %s: %w", name, err)
		}
		if name == v1alpha1.ServerPodName(sc) && pod.Metadata.Labels[sparkpod.LabelSparkRole] != sparkpod.RoleExecutor {
			in.releasedServer = pod
			continue
		}
		in.execs = append(in.execs, pod)
	}
	sort.Slice(in.execs, func(i, j int) bool { return in.execs[i].Metadata.Name < in.execs[j].Metadata.Name })
	if in.queue, err = newQueue(in, req.Related); err != nil {
		return nil, err
	}
	return in, nil
}

func decodeParent(raw json.RawMessage) (*v1alpha1.SparkConnect, field.ErrorList, error) {
	return metacontroller.DecodeParent(raw, v1alpha1.GroupVersion.WithKind(v1alpha1.KindSparkConnect), true, v1alpha1.DecodeSparkConnect)
}

// observedCount is the number of observed children.
func (in *input) observedCount() int {
	n := 0
	for _, key := range childKeys {
		n += len(in.children[key])
	}
	return n
}
