package schedule

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
)

// Labels and annotations on each run, as the Kubeflow operator sets them, plus the scheduled
// time, which the run's name also carries.
const (
	LabelScheduledAppName   = v1beta2.GroupName + "/scheduled-app-name"
	AnnotationScheduledTime = v1beta2.GroupName + "/scheduled-time"
)

// ChildKey is the key of runs in a sync request's children and in the controller registration.
var ChildKey = metacontroller.Key(v1beta2.KindSparkApplication, v1beta2.GroupVersion.String())

// maxNameLength is the limit on a SparkApplication's name (a DNS-1035 label).
const maxNameLength = 63

// runState is how a run counts for history and concurrency.
type runState int

const (
	runActive runState = iota
	runSucceeded
	runFailed
)

// run is an observed SparkApplication child of the schedule.
type run struct {
	name     string
	at       time.Time // the scheduled time it was created for
	state    runState
	deleting bool
}

// childView is the part of an observed SparkApplication the decision reads.
type childView struct {
	Metadata childMeta `json:"metadata"`
	Status   struct {
		ApplicationState struct {
			State v1beta2.ApplicationStateType `json:"state"`
		} `json:"applicationState"`
	} `json:"status"`
}

type childMeta struct {
	Name              string            `json:"name"`
	Labels            map[string]string `json:"labels"`
	Annotations       map[string]string `json:"annotations"`
	CreationTimestamp metav1.Time       `json:"creationTimestamp"`
	DeletionTimestamp *metav1.Time      `json:"deletionTimestamp"`
}

// observeRuns decodes the observed children into runs (oldest first) and foreign children:
// SparkApplications the schedule owns but did not name or label, which are kept untouched.
func observeRuns(children metacontroller.ChildMap, parentName string) (runs []run, foreign []*foreignObject, err error) {
	short := shortPrefix(parentName)
	for _, name := range children.Names(ChildKey) {
		var v childView
		if _, err := children.Decode(ChildKey, name, &v); err != nil {
			return nil, nil, metacontroller.RequestErrorf("%w", err)
		}
		at, ok := runTime(&v, parentName, short)
		if !ok {
			var f foreignObject
			if _, err := children.Decode(ChildKey, name, &f); err != nil {
				return nil, nil, metacontroller.RequestErrorf("%w", err)
			}
			foreign = append(foreign, &f)
			continue
		}
		runs = append(runs, run{
			name:     v.Metadata.Name,
			at:       at,
			state:    stateOf(v.Status.ApplicationState.State),
			deleting: v.Metadata.DeletionTimestamp != nil,
		})
	}
	slices.SortFunc(runs, func(a, b run) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return runs, foreign, nil
}

// runTime tells whether an observed child is a run of this schedule (by label or by name) and
// when it was scheduled: from the annotation, else the <unix seconds> ending of its name, else
// its creation time (runs the Kubeflow operator named with nanoseconds).
func runTime(v *childView, parentName, short string) (time.Time, bool) {
	name := v.Metadata.Name
	if v.Metadata.Labels[LabelScheduledAppName] != parentName &&
		!strings.HasPrefix(name, parentName+"-") && !strings.HasPrefix(name, short) {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.RFC3339, v.Metadata.Annotations[AnnotationScheduledTime]); err == nil {
		return t.UTC(), true
	}
	if digits := name[strings.LastIndexByte(name, '-')+1:]; len(digits) <= len("12345678901") {
		if secs, err := strconv.ParseInt(digits, 10, 64); err == nil && secs > 0 {
			return time.Unix(secs, 0).UTC(), true
		}
	}
	if !v.Metadata.CreationTimestamp.IsZero() {
		return v.Metadata.CreationTimestamp.UTC(), true
	}
	return time.Time{}, false
}

func stateOf(s v1beta2.ApplicationStateType) runState {
	switch s {
	case v1beta2.ApplicationStateCompleted:
		return runSucceeded
	case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
		return runFailed
	}
	return runActive
}

// runName is <parent>-<unix seconds>. When that is too long for a name, the parent part is cut
// and followed by a hash of the whole parent name, so two long names that share a prefix still
// give distinct runs.
func runName(parentName string, at time.Time) string {
	suffix := "-" + strconv.FormatInt(at.Unix(), 10)
	if len(parentName)+len(suffix) <= maxNameLength {
		return parentName + suffix
	}
	return shortPrefix(parentName) + suffix[1:]
}

// shortPrefix is the cut parent name and hash that long run names start with, up to the dash
// before the seconds (sized for ten digits, good until 2286).
func shortPrefix(parentName string) string {
	sum := sha256.Sum256([]byte(parentName))
	hash := hex.EncodeToString(sum[:4])
	keep := maxNameLength - len("-1234567890") - len(hash) - 1
	if keep > len(parentName) {
		keep = len(parentName)
	}
	return strings.TrimRight(parentName[:keep], "-") + "-" + hash + "-"
}

// runObject is a desired SparkApplication: only the fields the schedule owns. Metacontroller
// adds the owner reference.
type runObject struct {
	APIVersion string                        `json:"apiVersion"`
	Kind       string                        `json:"kind"`
	Metadata   runMeta                       `json:"metadata"`
	Spec       *v1beta2.SparkApplicationSpec `json:"spec"`
}

type runMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// runBuilder makes the desired object of each run. Every run shares the parent's labels and
// template: the controller registration updates runs OnDelete, so a run already created keeps
// the spec it started with whatever is returned here.
type runBuilder struct {
	namespace string
	labels    map[string]string
	template  *v1beta2.SparkApplicationSpec
}

func newRunBuilder(ssa *v1beta2.ScheduledSparkApplication) *runBuilder {
	labels := make(map[string]string, len(ssa.Labels)+1)
	for k, v := range ssa.Labels {
		labels[k] = v
	}
	labels[LabelScheduledAppName] = ssa.Name
	return &runBuilder{namespace: ssa.Namespace, labels: labels, template: &ssa.Spec.Template}
}

func (b *runBuilder) build(name string, at time.Time) *runObject {
	return &runObject{
		APIVersion: v1beta2.GroupVersion.String(),
		Kind:       v1beta2.KindSparkApplication,
		Metadata: runMeta{
			Name:        name,
			Namespace:   b.namespace,
			Labels:      b.labels,
			Annotations: map[string]string{AnnotationScheduledTime: at.UTC().Format(time.RFC3339)},
		},
		Spec: b.template,
	}
}

// foreignObject is an owned SparkApplication that is not a run of the schedule (renamed and
// relabelled by hand, say). It is returned as observed, minus status and server fields: the
// schedule never deletes what it does not recognise.
type foreignObject struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   runMeta         `json:"metadata"`
	Spec       json.RawMessage `json:"spec,omitempty"`
}

// NewRun is the run of ssa scheduled at at, as the sync hook asks Metacontroller to create it:
// its name, namespace, labels, scheduled-time annotation and the template as spec. A run made
// elsewhere from it (sparkctl's "run now") is one the hook recognises and keeps in its history;
// making it a child is the caller's part (a controller owner reference to ssa and, as
// Metacontroller's generated selector requires, the controller-uid label).
func NewRun(ssa *v1beta2.ScheduledSparkApplication, at time.Time) *v1beta2.SparkApplication {
	obj := newRunBuilder(ssa).build(runName(ssa.Name, at), at)
	return &v1beta2.SparkApplication{
		TypeMeta: metav1.TypeMeta{APIVersion: obj.APIVersion, Kind: obj.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name: obj.Metadata.Name, Namespace: obj.Metadata.Namespace,
			Labels: maps.Clone(obj.Metadata.Labels), Annotations: obj.Metadata.Annotations,
		},
		Spec: *obj.Spec.DeepCopy(),
	}
}
