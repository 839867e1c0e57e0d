package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appslisters "k8s.io/client-go/listers/apps/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// StatefulSetController is the part of kube-controller-manager's StatefulSet controller that
// Spark clusters need: pods <set>-<ordinal> from the template (hostname and subdomain set, owned
// by the set), created in order (OrderedReady) or all at once (Parallel), replaced when they end
// or when the template changes (highest ordinal first), removed on scale-down, and the set's
// replica counts in its status. Volume claim templates and partitioned updates are not modelled.
type StatefulSetController struct {
	client   kubernetes.Interface
	sets     appslisters.StatefulSetLister
	pods     corelisters.PodLister
	factory  informers.SharedInformerFactory
	pending  chan struct{}
	logf     func(string, ...any)
	resyncAt time.Duration
}

// NewStatefulSetController watches StatefulSets and pods in every namespace.
func NewStatefulSetController(cfg *restclient.Config, logf func(string, ...any)) (*StatefulSetController, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	c := &StatefulSetController{
		client: client, factory: factory, pending: make(chan struct{}, 1), logf: logf, resyncAt: 2 * time.Second,
		sets: factory.Apps().V1().StatefulSets().Lister(), pods: factory.Core().V1().Pods().Lister(),
	}
	poke := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.poke() }, UpdateFunc: func(any, any) { c.poke() }, DeleteFunc: func(any) { c.poke() },
	}
	for _, informer := range []cache.SharedIndexInformer{factory.Apps().V1().StatefulSets().Informer(), factory.Core().V1().Pods().Informer()} {
		if _, err := informer.AddEventHandler(poke); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *StatefulSetController) poke() {
	select {
	case c.pending <- struct{}{}:
	default:
	}
}

// Run reconciles every StatefulSet on each change, and every few seconds, until ctx ends.
func (c *StatefulSetController) Run(ctx context.Context) {
	c.factory.Start(ctx.Done())
	c.factory.WaitForCacheSync(ctx.Done())
	ticker := time.NewTicker(c.resyncAt)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			c.factory.Shutdown()
			return
		case <-c.pending:
		case <-ticker.C:
		}
		sets, err := c.sets.List(labels.Everything())
		if err != nil {
			continue
		}
		for _, set := range sets {
			if err := c.reconcile(ctx, set); err != nil && ctx.Err() == nil {
				c.logf("statefulset %s/%s: %v", set.Namespace, set.Name, err)
			}
		}
	}
}

func (c *StatefulSetController) reconcile(ctx context.Context, set *appsv1.StatefulSet) error {
	if set.DeletionTimestamp != nil {
		return nil
	}
	replicas := 1
	if set.Spec.Replicas != nil {
		replicas = int(*set.Spec.Replicas)
	}
	revision, err := templateRevision(set)
	if err != nil {
		return err
	}
	pods := map[int]*corev1.Pod{}
	all, err := c.pods.Pods(set.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, pod := range all {
		if owner := metav1.GetControllerOf(pod); owner != nil && owner.UID == set.UID {
			if ordinal, ok := ordinalOf(set.Name, pod.Name); ok {
				pods[ordinal] = pod
			}
		}
	}
	parallel := set.Spec.PodManagementPolicy == appsv1.ParallelPodManagement
	ready, current := 0, 0
	busy := false // a pod of the set is starting or going: OrderedReady waits for it
	for ordinal := 0; ordinal < replicas; ordinal++ {
		pod, exists := pods[ordinal]
		switch {
		case !exists:
			if busy && !parallel {
				continue
			}
			if err := c.createPod(ctx, set, ordinal, revision); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			busy = true
		case pod.DeletionTimestamp != nil:
			busy = true
		case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
			if err := c.deletePod(ctx, pod); err != nil {
				return err
			}
			busy = true
		default:
			if podIsReady(pod) {
				ready++
			} else {
				busy = true
			}
			if pod.Labels[appsv1.ControllerRevisionHashLabelKey] == revision {
				current++
			}
		}
	}
	// Scale down and roll out, one pod at a time from the highest ordinal, while the rest is
	// ready, as the RollingUpdate strategy does.
	if !busy {
		for ordinal := len(pods) + replicas; ordinal >= 0; ordinal-- {
			pod, exists := pods[ordinal]
			if !exists || pod.DeletionTimestamp != nil {
				continue
			}
			stale := pod.Labels[appsv1.ControllerRevisionHashLabelKey] != revision && set.Spec.UpdateStrategy.Type != appsv1.OnDeleteStatefulSetStrategyType
			if ordinal >= replicas || stale {
				if err := c.deletePod(ctx, pod); err != nil {
					return err
				}
				break
			}
		}
	}
	status := appsv1.StatefulSetStatus{
		ObservedGeneration: set.Generation, Replicas: int32(len(pods)), ReadyReplicas: int32(ready),
		AvailableReplicas: int32(ready), CurrentReplicas: int32(current), UpdatedReplicas: int32(current),
		CurrentRevision: revision, UpdateRevision: revision,
	}
	if equalStatefulSetStatus(set.Status, status) {
		return nil
	}
	fresh := set.DeepCopy()
	fresh.Status = status
	_, err = c.client.AppsV1().StatefulSets(set.Namespace).UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		c.poke()
		return nil
	}
	return err
}

func equalStatefulSetStatus(a, b appsv1.StatefulSetStatus) bool {
	return a.ObservedGeneration == b.ObservedGeneration && a.Replicas == b.Replicas && a.ReadyReplicas == b.ReadyReplicas &&
		a.AvailableReplicas == b.AvailableReplicas && a.CurrentReplicas == b.CurrentReplicas && a.UpdatedReplicas == b.UpdatedReplicas &&
		a.CurrentRevision == b.CurrentRevision && a.UpdateRevision == b.UpdateRevision
}

func (c *StatefulSetController) createPod(ctx context.Context, set *appsv1.StatefulSet, ordinal int, revision string) error {
	name := fmt.Sprintf("%s-%d", set.Name, ordinal)
	template := set.Spec.Template.DeepCopy()
	podLabels := map[string]string{}
	for k, v := range template.Labels {
		podLabels[k] = v
	}
	podLabels[appsv1.ControllerRevisionHashLabelKey] = revision
	podLabels[appsv1.StatefulSetPodNameLabel] = name
	podLabels[appsv1.PodIndexLabel] = strconv.Itoa(ordinal)
	isController, block := true, true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: set.Namespace, Labels: podLabels, Annotations: template.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: set.Name, UID: set.UID,
				Controller: &isController, BlockOwnerDeletion: &block,
			}},
		},
		Spec: template.Spec,
	}
	pod.Spec.Hostname = name
	pod.Spec.Subdomain = set.Spec.ServiceName
	_, err := c.client.CoreV1().Pods(set.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

func (c *StatefulSetController) deletePod(ctx context.Context, pod *corev1.Pod) error {
	uid := pod.UID
	err := c.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// templateRevision names the template's revision as the controller's revision hash does: the set's
// name and a hash of the template.
func templateRevision(set *appsv1.StatefulSet) (string, error) {
	data, err := json.Marshal(set.Spec.Template)
	if err != nil {
		return "", err
	}
	h := fnv.New32a()
	_, _ = h.Write(data)
	return set.Name + "-" + rand.SafeEncodeString(fmt.Sprint(h.Sum32())), nil
}

func ordinalOf(setName, podName string) (int, bool) {
	prefix := setName + "-"
	if len(podName) <= len(prefix) || podName[:len(prefix)] != prefix {
		return 0, false
	}
	ordinal, err := strconv.Atoi(podName[len(prefix):])
	return ordinal, err == nil && ordinal >= 0
}

func podIsReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
