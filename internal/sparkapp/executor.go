package sparkapp

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// executorPod is what every sync reads of a related executor Pod: its name, the labels it is
// selected and ordered by, its phase and whether the cluster is taking it away. It is walked
// from the Pod's bytes, which are most of a large application's request. An executor that has
// ended, whose failure the status tells and whose labels Kubeflow's metrics read, is decoded in
// full as well: there are few of them at a time.
type executorPod struct {
	name, role, appID, execID string
	phase                     corev1.PodPhase
	disrupted                 bool     // a DisruptionTarget condition is True
	full                      *podView // the whole Pod, for an ended executor only
	// labels is the Pod's labels as the request holds them, decoded only for the metrics of an
	// executor that ended.
	labels json.RawMessage
}

// decodeExecutor walks a related Pod's metadata and status.
func decodeExecutor(raw json.RawMessage) (*executorPod, error) {
	pod := &executorPod{}
	err := metacontroller.EachField(raw, func(key, value []byte) error {
		switch {
		case metacontroller.Is(key, "metadata"):
			return pod.metadata(value)
		case metacontroller.Is(key, "status"):
			return pod.status(value)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if pod.phase == corev1.PodSucceeded || pod.phase == corev1.PodFailed {
		pod.full = &podView{}
		if err := json.Unmarshal(raw, pod.full); err != nil {
			return nil, err
		}
	}
	return pod, nil
}

func (p *executorPod) metadata(md []byte) error {
	return metacontroller.EachField(md, func(key, value []byte) (err error) {
		switch {
		case metacontroller.Is(key, "name"):
			p.name, err = metacontroller.String(value)
		case metacontroller.Is(key, "labels"):
			p.labels = value
			return metacontroller.EachField(value, func(label, value []byte) (err error) {
				switch {
				case metacontroller.Is(label, sparkpod.LabelSparkRole):
					p.role, err = knownString(value, sparkpod.RoleExecutor, sparkpod.RoleDriver)
				case metacontroller.Is(label, sparkpod.LabelAppSelector):
					p.appID, err = metacontroller.String(value)
				case metacontroller.Is(label, "spark-exec-id"):
					p.execID, err = metacontroller.String(value)
				}
				return err
			})
		}
		return err
	})
}

func (p *executorPod) status(st []byte) error {
	return metacontroller.EachField(st, func(key, value []byte) error {
		switch {
		case metacontroller.Is(key, "phase"):
			phase, err := knownString(value, string(corev1.PodPending), string(corev1.PodRunning), string(corev1.PodSucceeded), string(corev1.PodFailed))
			p.phase = corev1.PodPhase(phase)
			return err
		case metacontroller.Is(key, "conditions"):
			p.disrupted = false
			return metacontroller.EachElement(value, func(c []byte) error {
				var typ, status bool
				err := metacontroller.EachField(c, func(key, value []byte) error {
					switch {
					case metacontroller.Is(key, "type"):
						typ = metacontroller.Is(value, string(corev1.DisruptionTarget))
					case metacontroller.Is(key, "status"):
						status = metacontroller.Is(value, string(corev1.ConditionTrue))
					}
					return nil
				})
				p.disrupted = p.disrupted || (typ && status)
				return err
			})
		}
		return nil
	})
}

// sigtermExit is the exit code of a JVM that ended on SIGTERM (128 + 15).
const sigtermExit = 143

// stoppedByDeletion reports an executor that ended on the SIGTERM of its Pod's deletion, with no
// DisruptionTarget condition: its driver released it or shut it down (or a person deleted it),
// which is a stop, not a failure. The driver asks its executors to exit first, and one that gets
// the signal before it has exited ends with 143. Evictions, preemptions and lost nodes carry the
// condition; an executor that failed on its own ended with its own code before any deletion.
func (p *executorPod) stoppedByDeletion() bool {
	if p.full == nil || p.disrupted || p.full.Metadata.DeletionTimestamp == nil {
		return false
	}
	c := findContainer(p.full.Status.ContainerStatuses, executorContainer)
	return c != nil && c.State.Terminated != nil && c.State.Terminated.ExitCode == sigtermExit
}

// knownString reads a JSON string, sharing the constant it equals instead of allocating a copy.
func knownString(raw []byte, known ...string) (string, error) {
	for _, s := range known {
		if metacontroller.Is(raw, s) {
			return s, nil
		}
	}
	return metacontroller.String(raw)
}
