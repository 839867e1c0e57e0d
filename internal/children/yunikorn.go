package children

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// YuniKorn's names.
const (
	yunikornScheduler           = "yunikorn"
	yunikornTaskGroupName       = "yunikorn.apache.org/task-group-name"
	yunikornTaskGroups          = "yunikorn.apache.org/task-groups"
	yunikornDriverGroup         = "spark-driver"
	yunikornExecutorGroup       = "spark-executor"
	yunikornQueueLabel          = "queue"
	sparkDriverAnnotationPrefix = "spark.kubernetes.driver.annotation."
	sparkExecAnnotationPrefix   = "spark.kubernetes.executor.annotation."
)

// taskGroup is one YuniKorn task group: the gang YuniKorn reserves room for before the first
// Pod of the group is placed.
type taskGroup struct {
	Name         string              `json:"name"`
	MinMember    int64               `json:"minMember"`
	MinResource  map[string]string   `json:"minResource,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
	Labels       map[string]string   `json:"labels,omitempty"`
}

// yunikorn prepares an application for YuniKorn's gang scheduling as the Kubeflow operator
// does: the queue label on the driver and the executors, and the task
// groups as annotations, the whole list on the driver, which YuniKorn reads from the first Pod of
// the application, and each executor's group name on the executors.
func (b *builder) yunikorn() error {
	if b.batchScheduler() != yunikornScheduler {
		return nil
	}
	if opts := b.spec.BatchSchedulerOptions; opts != nil && opts.Queue != nil {
		b.conf.set("spark.kubernetes.driver.label."+yunikornQueueLabel, *opts.Queue)
		b.conf.set("spark.kubernetes.executor.label."+yunikornQueueLabel, *opts.Queue)
	}
	driverGroup, err := b.taskGroup(yunikornDriverGroup, "driver", 1, &b.spec.Driver.SparkPodSpec)
	if err != nil {
		return err
	}
	groups := []taskGroup{driverGroup}
	// YuniKorn refuses a group of zero members.
	if n := b.initialExecutors(); n > 0 {
		execGroup, err := b.taskGroup(yunikornExecutorGroup, "executor", n, &b.spec.Executor.SparkPodSpec)
		if err != nil {
			return err
		}
		groups = append(groups, execGroup)
		b.conf.set(sparkExecAnnotationPrefix+yunikornTaskGroupName, yunikornExecutorGroup)
	}
	data, err := json.Marshal(groups)
	if err != nil {
		return fmt.Errorf("encode YuniKorn task groups: %w", err)
	}
	b.conf.set(sparkDriverAnnotationPrefix+yunikornTaskGroupName, yunikornDriverGroup)
	b.conf.set(sparkDriverAnnotationPrefix+yunikornTaskGroups, string(data))
	return nil
}

func (b *builder) taskGroup(name, role string, members int64, ps *v1beta2.SparkPodSpec) (taskGroup, error) {
	cpu, err := b.roleCPU(role)
	if err != nil {
		return taskGroup{}, err
	}
	mib, err := containerMemoryMiB(b.conf, role, b.version)
	if err != nil {
		return taskGroup{}, buildErrorf("%s memory: %v", role, err)
	}
	if role == "executor" {
		extra, err := b.executorExtraMemoryMiB()
		if err != nil {
			return taskGroup{}, err
		}
		mib += extra
	}
	// Validation keeps the application's node selector and the roles' apart.
	nodeSelector := ps.NodeSelector
	if len(nodeSelector) == 0 {
		nodeSelector = b.spec.NodeSelector
	}
	return taskGroup{
		Name:         name,
		MinMember:    members,
		MinResource:  map[string]string{string(corev1.ResourceCPU): cpu.String(), string(corev1.ResourceMemory): fmt.Sprintf("%dMi", mib)},
		NodeSelector: nodeSelector,
		Tolerations:  ps.Tolerations,
		Affinity:     ps.Affinity,
		Labels:       ps.Labels,
	}, nil
}

// executorExtraMemoryMiB is the memory Spark adds to an executor's container beyond the heap and
// its overhead: the Python workers' share and the off-heap store.
func (b *builder) executorExtraMemoryMiB() (int64, error) {
	var mib int64
	if b.spec.Type == v1beta2.SparkApplicationTypePython {
		if s := strings.TrimSpace(b.conf.get("spark.executor.pyspark.memory")); s != "" {
			n, err := parseMiBDefaultUnit(s, "m")
			if err != nil {
				return 0, buildErrorf("spark.executor.pyspark.memory: %v", err)
			}
			mib += n
		}
	}
	if enabled := b.conf.get("spark.memory.offHeap.enabled"); enabled != "" && enabled != "false" {
		if s := strings.TrimSpace(b.conf.get("spark.memory.offHeap.size")); s != "" {
			n, err := parseMiBDefaultUnit(s, "b")
			if err != nil {
				return 0, buildErrorf("spark.memory.offHeap.size: %v", err)
			}
			mib += n
		}
	}
	return mib, nil
}

// parseMiBDefaultUnit reads a Spark size whose bare numbers are in unit (Spark declares a default
// unit per property: MiB for pyspark.memory, bytes for offHeap.size).
func parseMiBDefaultUnit(s, unit string) (int64, error) {
	if last := s[len(s)-1]; last >= '0' && last <= '9' {
		s += unit
	}
	return parseMiB(s)
}
