package prockubelet

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// As a kubelet's defaults: the node status and the Lease every 10 s, a Lease valid for 40 s,
// so kube-controller-manager's node lifecycle controller sees a live node.
const (
	nodeStatusInterval   = 10 * time.Second
	leaseDurationSeconds = 40
	// registerRetry is the wait before registering again after a failure.
	registerRetry = time.Second
	// maxPods is a kubelet's default --max-pods.
	maxPods = 110
)

// Hard eviction thresholds a kubelet keeps by default; allocatable leaves them out.
var (
	evictionMemory         = resource.MustParse("100Mi")
	evictionStoragePercent = int64(10)
)

// NodeConfig says what a Node is registered with.
type NodeConfig struct {
	// Client is the kubelet's own client, as the node (system:node:<Name>).
	Client kubernetes.Interface
	Name   string
	// IP is the node's InternalIP, where the kubelet API listens.
	IP netip.Addr
	// KubeletVersion is status.nodeInfo.kubeletVersion.
	KubeletVersion string
	// Runtime names the container runtime in status.nodeInfo.containerRuntimeVersion
	// (<Runtime>://<module version>).
	Runtime string
	// Capacity replaces what the machine reports for the resources it names.
	Capacity corev1.ResourceList
	// Taints are the taints the Node is created with (a kubelet's --register-with-taints).
	Taints []corev1.Taint
	// StateDir is the kubelet's directory: its filesystem is the node's ephemeral storage.
	StateDir string
	Logf     func(format string, args ...any)
	Now      func() time.Time
}

// Node is a kubelet's side of its Node: it registers it with what the machine has and keeps it
// Ready, its status and its Lease renewed. The process kubelet and the simulated kubelet
// (sandbox/internal/simkubelet) share it, so both are the same node to the control plane.
type Node struct {
	cfg   NodeConfig
	facts nodeFacts
}

// NewNode measures the machine for the Node; KeepReady registers it.
func NewNode(cfg NodeConfig) (*Node, error) {
	if cfg.Client == nil || cfg.Name == "" || !cfg.IP.IsValid() || cfg.StateDir == "" {
		return nil, errors.New("node: Client, Name, IP and StateDir are required")
	}
	if cfg.KubeletVersion == "" {
		cfg.KubeletVersion = DefaultKubeletVersion
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	facts, err := readNodeFacts(cfg.StateDir, cfg.Capacity, cfg.Runtime)
	if err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, facts: facts}, nil
}

// nodeFacts are what the Node reports about the machine; they do not change while the kubelet
// runs.
type nodeFacts struct {
	capacity    corev1.ResourceList
	allocatable corev1.ResourceList
	info        corev1.NodeSystemInfo
}

// readNodeFacts measures the machine as a kubelet does (CPUs, memory, the filesystem of the
// state directory), with overrides replacing what it measured.
func readNodeFacts(stateDir string, overrides corev1.ResourceList, runtimeName string) (nodeFacts, error) {
	memory, err := memTotal("/proc/meminfo")
	if err != nil {
		return nodeFacts{}, err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(stateDir, &fs); err != nil {
		return nodeFacts{}, fmt.Errorf("measuring the filesystem of %s: %w", stateDir, err)
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(memory, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(maxPods, resource.DecimalSI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(int64(fs.Blocks)*fs.Bsize, resource.BinarySI),
	}
	for name, quantity := range overrides {
		capacity[name] = quantity.DeepCopy()
	}
	allocatable := capacity.DeepCopy()
	if memory, ok := allocatable[corev1.ResourceMemory]; ok {
		memory.Sub(evictionMemory)
		allocatable[corev1.ResourceMemory] = memory
	}
	if storage, ok := allocatable[corev1.ResourceEphemeralStorage]; ok {
		kept := storage.Value() - storage.Value()*evictionStoragePercent/100
		allocatable[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(kept, resource.BinarySI)
	}
	var uname unix.Utsname
	if err := unix.Uname(&uname); err != nil {
		return nodeFacts{}, fmt.Errorf("uname: %w", err)
	}
	return nodeFacts{
		capacity:    capacity,
		allocatable: allocatable,
		info: corev1.NodeSystemInfo{
			MachineID:               readTrimmed("/etc/machine-id"),
			SystemUUID:              readTrimmed("/sys/class/dmi/id/product_uuid"),
			BootID:                  readTrimmed("/proc/sys/kernel/random/boot_id"),
			KernelVersion:           unix.ByteSliceToString(uname.Release[:]),
			OSImage:                 osImage("/etc/os-release"),
			ContainerRuntimeVersion: runtimeName + "://" + runtimeVersion(),
			OperatingSystem:         runtime.GOOS,
			Architecture:            runtime.GOARCH,
		},
	}, nil
}

// memTotal reads the machine's memory in bytes from a meminfo file.
func memTotal(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("reading the machine's memory: %w", err)
	}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: MemTotal %q: %w", path, fields[1], err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("%s has no MemTotal line in kB", path)
}

// readTrimmed reads an identifier file; a machine without it reports the field empty.
func readTrimmed(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// osImage is the PRETTY_NAME of an os-release file, as a kubelet reports it.
func osImage(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if value, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			if unquoted, err := strconv.Unquote(value); err == nil {
				return unquoted
			}
			return value
		}
	}
	return ""
}

// runtimeVersion is the version of the module this kubelet was built from, which is the only
// version this runtime has.
func runtimeVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// nodeLabels are the labels a kubelet on Linux gives its Node without a cloud provider.
func (n *Node) nodeLabels() map[string]string {
	return map[string]string{
		corev1.LabelHostname:      n.cfg.Name,
		corev1.LabelOSStable:      runtime.GOOS,
		corev1.LabelArchStable:    runtime.GOARCH,
		"beta.kubernetes.io/os":   runtime.GOOS,
		"beta.kubernetes.io/arch": runtime.GOARCH,
	}
}

// nodeStatus is the Node's status, Ready, with the kubelet API at port; conditions keep their
// transition times from old while their status holds.
func (n *Node) nodeStatus(old corev1.NodeStatus, port int) corev1.NodeStatus {
	now := metav1.NewTime(n.cfg.Now())
	status := corev1.NodeStatus{
		Capacity:    n.facts.capacity.DeepCopy(),
		Allocatable: n.facts.allocatable.DeepCopy(),
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: n.cfg.IP.String()},
			{Type: corev1.NodeHostName, Address: n.cfg.Name},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
		NodeInfo:        n.facts.info,
	}
	status.NodeInfo.KubeletVersion = n.cfg.KubeletVersion
	for _, c := range []struct {
		t       corev1.NodeConditionType
		status  corev1.ConditionStatus
		reason  string
		message string
	}{
		{corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"},
	} {
		transition := now
		for _, o := range old.Conditions {
			if o.Type == c.t && o.Status == c.status {
				transition = o.LastTransitionTime
			}
		}
		status.Conditions = append(status.Conditions, corev1.NodeCondition{
			Type: c.t, Status: c.status, Reason: c.reason, Message: c.message,
			LastHeartbeatTime: now, LastTransitionTime: transition,
		})
	}
	return status
}

// KeepReady registers the Node with the kubelet API at port, then posts its status and renews
// its Lease every nodeStatusInterval until ctx ends. A Node deleted meanwhile is registered again.
func (n *Node) KeepReady(ctx context.Context, port int) {
	var node *corev1.Node
	for {
		var err error
		if node == nil {
			node, err = n.registerNode(ctx, port)
		}
		if err == nil {
			node, err = n.updateNodeStatus(ctx, port)
		}
		if err == nil && node == nil {
			// Seen once in CI, while the sandbox stopped: no Node and no error. Registering
			// again is the answer that cannot go wrong.
			err = errors.New("the status update returned no Node")
		}
		if err == nil {
			err = RenewNodeLease(ctx, n.cfg.Client, node, n.cfg.Now())
		}
		wait := nodeStatusInterval
		if err != nil && ctx.Err() == nil {
			n.cfg.Logf("node %s: %v", n.cfg.Name, err)
			if node == nil {
				wait = registerRetry
			}
		}
		if !sleepCtx(ctx, wait) {
			return
		}
	}
}

// registerNode creates the Node with its status or, when it exists (a kubelet started again),
// brings its labels up to date. Under NodeRestriction a node may change only its own Node, and
// not its taints, which this leaves as they are.
func (n *Node) registerNode(ctx context.Context, port int) (*corev1.Node, error) {
	nodes := n.cfg.Client.CoreV1().Nodes()
	node, err := nodes.Create(ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.cfg.Name, Labels: n.nodeLabels()},
		Spec:       corev1.NodeSpec{Taints: n.cfg.Taints},
		Status:     n.nodeStatus(corev1.NodeStatus{}, port),
	}, metav1.CreateOptions{})
	if err == nil {
		return node, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("registering the node: %w", err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing, err := nodes.Get(ctx, n.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node = existing
		changed := false
		for key, value := range n.nodeLabels() {
			if existing.Labels[key] != value {
				if existing.Labels == nil {
					existing.Labels = map[string]string{}
				}
				existing.Labels[key] = value
				changed = true
			}
		}
		if changed {
			node, err = nodes.Update(ctx, existing, metav1.UpdateOptions{})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("updating the labels of the existing node: %w", err)
	}
	return node, nil
}

// updateNodeStatus posts the Node's status through the status subresource; it returns no node
// when the Node is gone.
func (n *Node) updateNodeStatus(ctx context.Context, port int) (*corev1.Node, error) {
	nodes := n.cfg.Client.CoreV1().Nodes()
	var updated *corev1.Node
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(ctx, n.cfg.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Status = n.nodeStatus(node.Status, port)
		updated, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("updating the node status: %w", err)
	}
	return updated, nil
}

// RenewNodeLease renews node's Lease in kube-node-lease as of renewed, creating it owned by the
// Node as a kubelet does, so that it goes with the Node. The node lifecycle controller of
// kube-controller-manager reads it as the node's heartbeat.
func RenewNodeLease(ctx context.Context, client kubernetes.Interface, node *corev1.Node, renewed time.Time) error {
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	holder, duration := node.Name, int32(leaseDurationSeconds)
	spec := coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &metav1.MicroTime{Time: renewed}}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease, err := leases.Get(ctx, node.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = leases.Create(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{
					Name: node.Name, Namespace: corev1.NamespaceNodeLease,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}},
				},
				Spec: spec,
			}, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = spec.HolderIdentity, spec.LeaseDurationSeconds, spec.RenewTime
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("renewing the node lease: %w", err)
	}
	return nil
}
