//go:build e2e

package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/prockubelet"
)

// NodeName is the fake node: the scheduler binds test workloads to it and the fake kubelets
// play the pods bound there.
const NodeName = "e2e-node"

// heartbeat is how often the node renews its Lease and posts its status, as a kubelet does by
// default. kube-controller-manager's node lifecycle controller taints a node whose Lease and Ready
// condition have not moved for its grace period (50 s), which would stop the scheduler.
const heartbeat = 10 * time.Second

// hostIP is the fake node's address, from TEST-NET-1: nothing is ever reached there.
const hostIP = "192.0.2.1"

// Node is the fake node. Nothing runs on it: it is registered and kept Ready so that the real
// scheduler places test workloads on it, and the per-namespace Kubelets play their pods.
type Node struct {
	client kubernetes.Interface
	labels map[string]string
}

// RegisterNode registers NodeName with labels besides the ones every kubelet sets, and returns
// once the node lifecycle controller has lifted the not-ready taint admission gives a new Node,
// so the scheduler takes the node from then on. Run keeps it Ready.
func RegisterNode(ctx context.Context, cfg *restclient.Config, labels map[string]string) (*Node, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	n := &Node{client: client, labels: map[string]string{corev1.LabelHostname: NodeName}}
	maps.Copy(n.labels, labels)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName, Labels: n.labels}, Status: n.status(nil)}
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("registering node %s: %w", NodeName, err)
	}
	if err := n.renewLease(ctx, created); err != nil {
		return nil, err
	}
	if err := n.waitSchedulable(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// Run renews the node's Lease and posts its status every heartbeat until ctx ends. A failed
// heartbeat goes to logf and the next one is tried as usual: the node has a grace period.
func (n *Node) Run(ctx context.Context, logf func(format string, args ...any)) {
	ticker := time.NewTicker(heartbeat)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		node, err := n.postStatus(ctx)
		if err == nil {
			err = n.renewLease(ctx, node)
		}
		if err != nil && ctx.Err() == nil {
			logf("node %s heartbeat: %v", NodeName, err)
		}
	}
}

// status is the node's status: generous capacity (nothing runs, so nothing is short) and Ready,
// with fresh heartbeats; conditions keep their transition times from old.
func (n *Node) status(old *corev1.NodeStatus) corev1.NodeStatus {
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("2000"), // a driver and 1,000 executors (TestBigApplicationCost)
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
	status := corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity.DeepCopy(),
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: hostIP},
			{Type: corev1.NodeHostName, Address: NodeName},
		},
		NodeInfo: corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: n.labels[corev1.LabelArchStable], KubeletVersion: "e2e"},
	}
	for _, c := range []struct {
		t      corev1.NodeConditionType
		status corev1.ConditionStatus
		reason string
	}{
		{corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"},
		{corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"},
		{corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"},
		{corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"},
	} {
		transition := now
		if old != nil {
			for _, o := range old.Conditions {
				if o.Type == c.t && o.Status == c.status {
					transition = o.LastTransitionTime
				}
			}
		}
		status.Conditions = append(status.Conditions, corev1.NodeCondition{
			Type: c.t, Status: c.status, Reason: c.reason, LastHeartbeatTime: now, LastTransitionTime: transition,
		})
	}
	return status
}

func (n *Node) postStatus(ctx context.Context) (*corev1.Node, error) {
	nodes := n.client.CoreV1().Nodes()
	var updated *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Status = n.status(&node.Status)
		updated, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("posting the node status: %w", err)
	}
	return updated, nil
}

// renewLease renews the node's Lease, the heartbeat the node lifecycle controller reads.
func (n *Node) renewLease(ctx context.Context, node *corev1.Node) error {
	return prockubelet.RenewNodeLease(ctx, n.client, node, time.Now())
}

// waitSchedulable waits until the node carries no not-ready or unreachable taint.
func (n *Node) waitSchedulable(ctx context.Context) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		node, err := n.client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		for _, t := range node.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
				last = fmt.Errorf("still tainted: %v", node.Spec.Taints)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s to be schedulable: %w", NodeName, errors.Join(err, last))
	}
	return nil
}
