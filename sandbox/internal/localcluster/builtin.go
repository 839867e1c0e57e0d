package localcluster

import (
	"context"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
)

// builtinKind describes one built-in resource the harness serves from a generic registry store:
// what the generic store does not know about the kind (status handling, the validation rules
// that matter to sparkhooks, pod graceful deletion) lives here.
type builtinKind struct {
	gvr        schema.GroupVersionResource
	singular   string
	namespaced bool
	newObj     func() runtime.Object
	newList    func() runtime.Object
	// hasStatus adds the /status subresource; the main resource then ignores status changes.
	hasStatus bool
	// validate checks an object on create and update; validateUpdate adds update-only rules.
	validate       func(obj runtime.Object) field.ErrorList
	validateUpdate func(obj, old runtime.Object) field.ErrorList
	// gracePeriod, when set, makes deletion graceful with the returned period (0: immediate).
	gracePeriod func(obj runtime.Object, requested *int64) int64
	// prepareCreate normalises a new object (for pods: the initial Pending status).
	prepareCreate func(obj runtime.Object)
	// normalize is what the API server's conversion does to every object written, created or
	// updated (for secrets: stringData folded into data).
	normalize func(obj runtime.Object)
	// selectableFields are the field selectors the kind supports besides metadata.name and
	// metadata.namespace (kubectl get events --field-selector involvedObject.name=…).
	selectableFields func(obj runtime.Object) fields.Set
}

// builtinKinds are the built-in resources the harness serves: what sparkhooks creates (pods,
// configmaps, services, ingresses), what its pods reference (secrets, service accounts), and what
// controllers and kubectl expect to exist (namespaces, events).
func builtinKinds() []builtinKind {
	core := func(resource string) schema.GroupVersionResource {
		return corev1.SchemeGroupVersion.WithResource(resource)
	}
	return []builtinKind{
		{
			gvr: core("namespaces"), singular: "namespace",
			newObj: func() runtime.Object { return &corev1.Namespace{} }, newList: func() runtime.Object { return &corev1.NamespaceList{} },
			hasStatus: true,
			prepareCreate: func(obj runtime.Object) {
				obj.(*corev1.Namespace).Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
			},
		},
		{
			gvr: core("pods"), singular: "pod", namespaced: true,
			newObj: func() runtime.Object { return &corev1.Pod{} }, newList: func() runtime.Object { return &corev1.PodList{} },
			selectableFields: func(obj runtime.Object) fields.Set {
				pod := obj.(*corev1.Pod)
				return fields.Set{"spec.nodeName": pod.Spec.NodeName, "status.phase": string(pod.Status.Phase)}
			},
			hasStatus: true,
			validate:  func(obj runtime.Object) field.ErrorList { return validatePod(obj.(*corev1.Pod)) },
			validateUpdate: func(obj, old runtime.Object) field.ErrorList {
				return validatePodUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
			},
			gracePeriod: podGracePeriod,
			prepareCreate: func(obj runtime.Object) {
				obj.(*corev1.Pod).Status = corev1.PodStatus{Phase: corev1.PodPending}
			},
		},
		{
			gvr: core("configmaps"), singular: "configmap", namespaced: true,
			newObj: func() runtime.Object { return &corev1.ConfigMap{} }, newList: func() runtime.Object { return &corev1.ConfigMapList{} },
			validate: func(obj runtime.Object) field.ErrorList { return validateConfigMap(obj.(*corev1.ConfigMap)) },
		},
		{
			gvr: core("secrets"), singular: "secret", namespaced: true,
			newObj: func() runtime.Object { return &corev1.Secret{} }, newList: func() runtime.Object { return &corev1.SecretList{} },
			normalize: func(obj runtime.Object) { foldStringData(obj.(*corev1.Secret)) },
		},
		{
			gvr: core("services"), singular: "service", namespaced: true,
			newObj: func() runtime.Object { return &corev1.Service{} }, newList: func() runtime.Object { return &corev1.ServiceList{} },
			hasStatus: true,
			validate:  func(obj runtime.Object) field.ErrorList { return validateService(obj.(*corev1.Service)) },
		},
		{
			gvr: core("serviceaccounts"), singular: "serviceaccount", namespaced: true,
			newObj: func() runtime.Object { return &corev1.ServiceAccount{} }, newList: func() runtime.Object { return &corev1.ServiceAccountList{} },
		},
		{
			// Spark's driver deletes its application's claims by label when it stops, and fails
			// the stop (logged, not fatal) when the API has no such resource.
			gvr: core("persistentvolumeclaims"), singular: "persistentvolumeclaim", namespaced: true,
			newObj:    func() runtime.Object { return &corev1.PersistentVolumeClaim{} },
			newList:   func() runtime.Object { return &corev1.PersistentVolumeClaimList{} },
			hasStatus: true,
		},
		{
			gvr: core("events"), singular: "event", namespaced: true,
			newObj: func() runtime.Object { return &corev1.Event{} }, newList: func() runtime.Object { return &corev1.EventList{} },
			selectableFields: func(obj runtime.Object) fields.Set {
				event := obj.(*corev1.Event)
				return fields.Set{
					"involvedObject.kind": event.InvolvedObject.Kind, "involvedObject.namespace": event.InvolvedObject.Namespace,
					"involvedObject.name": event.InvolvedObject.Name, "involvedObject.uid": string(event.InvolvedObject.UID),
					"involvedObject.apiVersion": event.InvolvedObject.APIVersion, "reason": event.Reason, "type": event.Type,
					"source": event.Source.Component,
				}
			},
		},
		{
			gvr: networkingv1.SchemeGroupVersion.WithResource("ingresses"), singular: "ingress", namespaced: true,
			newObj: func() runtime.Object { return &networkingv1.Ingress{} }, newList: func() runtime.Object { return &networkingv1.IngressList{} },
			hasStatus: true,
			validate:  func(obj runtime.Object) field.ErrorList { return validateIngress(obj.(*networkingv1.Ingress)) },
		},
		// What a SparkCluster is made of. No controller acts on them: a test reports the
		// StatefulSets' ready replicas as the kubelet reports pods.
		{
			gvr: networkingv1.SchemeGroupVersion.WithResource("networkpolicies"), singular: "networkpolicy", namespaced: true,
			newObj: func() runtime.Object { return &networkingv1.NetworkPolicy{} }, newList: func() runtime.Object { return &networkingv1.NetworkPolicyList{} },
		},
		{
			gvr: appsv1.SchemeGroupVersion.WithResource("statefulsets"), singular: "statefulset", namespaced: true,
			newObj: func() runtime.Object { return &appsv1.StatefulSet{} }, newList: func() runtime.Object { return &appsv1.StatefulSetList{} },
			hasStatus: true,
		},
		{
			gvr: autoscalingv2.SchemeGroupVersion.WithResource("horizontalpodautoscalers"), singular: "horizontalpodautoscaler", namespaced: true,
			newObj:    func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
			newList:   func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} },
			hasStatus: true,
		},
		// What the chart gives a job namespace's spark account. Stored, not enforced: this API
		// server authorizes every service account (see podaccess.go).
		{
			gvr: rbacv1.SchemeGroupVersion.WithResource("roles"), singular: "role", namespaced: true,
			newObj: func() runtime.Object { return &rbacv1.Role{} }, newList: func() runtime.Object { return &rbacv1.RoleList{} },
		},
		{
			gvr: rbacv1.SchemeGroupVersion.WithResource("rolebindings"), singular: "rolebinding", namespaced: true,
			newObj: func() runtime.Object { return &rbacv1.RoleBinding{} }, newList: func() runtime.Object { return &rbacv1.RoleBindingList{} },
		},
		{
			gvr: policyv1.SchemeGroupVersion.WithResource("poddisruptionbudgets"), singular: "poddisruptionbudget", namespaced: true,
			newObj:    func() runtime.Object { return &policyv1.PodDisruptionBudget{} },
			newList:   func() runtime.Object { return &policyv1.PodDisruptionBudgetList{} },
			hasStatus: true,
		},
		// What Kueue's controller watches besides its own kinds (LimitRanges and RuntimeClasses
		// add to a Workload's requests, Nodes back topology-aware scheduling): the Kueue e2e runs
		// the real controller against this API server.
		{
			gvr: core("limitranges"), singular: "limitrange", namespaced: true,
			newObj: func() runtime.Object { return &corev1.LimitRange{} }, newList: func() runtime.Object { return &corev1.LimitRangeList{} },
		},
		{
			gvr: core("nodes"), singular: "node",
			newObj: func() runtime.Object { return &corev1.Node{} }, newList: func() runtime.Object { return &corev1.NodeList{} },
			hasStatus: true,
		},
		// Kueue's batch/job integration is the one it always sets up.
		{
			gvr: batchv1.SchemeGroupVersion.WithResource("jobs"), singular: "job", namespaced: true,
			newObj: func() runtime.Object { return &batchv1.Job{} }, newList: func() runtime.Object { return &batchv1.JobList{} },
			hasStatus: true,
		},
		{
			gvr: nodev1.SchemeGroupVersion.WithResource("runtimeclasses"), singular: "runtimeclass",
			newObj:  func() runtime.Object { return &nodev1.RuntimeClass{} },
			newList: func() runtime.Object { return &nodev1.RuntimeClassList{} },
		},
		// Every cluster serves PriorityClasses; a queued application's customize hook asks for
		// them (the Kueue Workload carries the driver's priority value).
		{
			gvr: schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"), singular: "priorityclass",
			newObj:  func() runtime.Object { return &schedulingv1.PriorityClass{} },
			newList: func() runtime.Object { return &schedulingv1.PriorityClassList{} },
		},
	}
}

// builtinGroupVersions are the API group versions of the built-in kinds, core/v1 first.
var builtinGroupVersions = []schema.GroupVersion{
	corev1.SchemeGroupVersion, networkingv1.SchemeGroupVersion, appsv1.SchemeGroupVersion,
	autoscalingv2.SchemeGroupVersion, policyv1.SchemeGroupVersion, rbacv1.SchemeGroupVersion,
	schedulingv1.SchemeGroupVersion, nodev1.SchemeGroupVersion, batchv1.SchemeGroupVersion,
}

// newBuiltinScheme registers the built-in types under their versions and, because the generic
// API server decodes every request into an internal hub version, under the internal version too:
// the same Go type in both places makes that "conversion" a no-op.
func newBuiltinScheme() (*runtime.Scheme, serializer.CodecFactory, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, networkingv1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme, policyv1.AddToScheme, rbacv1.AddToScheme, schedulingv1.AddToScheme, nodev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, serializer.CodecFactory{}, err
		}
	}
	for _, kind := range builtinKinds() {
		internal := schema.GroupVersion{Group: kind.gvr.Group, Version: runtime.APIVersionInternal}
		scheme.AddKnownTypes(internal, kind.newObj(), kind.newList())
		if kind.selectableFields == nil {
			continue
		}
		known := kind.selectableFields(kind.newObj())
		gvk := kind.gvr.GroupVersion().WithKind(reflect.TypeOf(kind.newObj()).Elem().Name())
		err := scheme.AddFieldLabelConversionFunc(gvk, func(label, value string) (string, string, error) {
			if _, ok := known[label]; ok || label == "metadata.name" || label == "metadata.namespace" {
				return label, value, nil
			}
			return "", "", fmt.Errorf("field label not supported: %s", label)
		})
		if err != nil {
			return nil, serializer.CodecFactory{}, err
		}
	}
	// pods/log reads its options from the query string into the core types.
	scheme.AddKnownTypes(schema.GroupVersion{Version: runtime.APIVersionInternal}, &corev1.PodLogOptions{})
	if err := addPodLogOptionsConversion(scheme); err != nil {
		return nil, serializer.CodecFactory{}, err
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	scheme.AddUnversionedTypes(schema.GroupVersion{Version: "v1"},
		&metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	for _, gv := range builtinGroupVersions {
		if err := scheme.SetVersionPriority(gv); err != nil {
			return nil, serializer.CodecFactory{}, err
		}
	}
	return scheme, serializer.NewCodecFactory(scheme), nil
}

// newBuiltinStorage returns the REST storage of one kind: the main resource and, for kinds with
// status, the /status subresource.
func newBuiltinStorage(kind builtinKind, scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (map[string]rest.Storage, error) {
	main := &kindStrategy{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator, kind: kind}
	store := &genericregistry.Store{
		NewFunc:                   kind.newObj,
		NewListFunc:               kind.newList,
		DefaultQualifiedResource:  kind.gvr.GroupResource(),
		SingularQualifiedResource: schema.GroupResource{Group: kind.gvr.Group, Resource: kind.singular},
		CreateStrategy:            main,
		UpdateStrategy:            main,
		DeleteStrategy:            main,
		TableConvertor:            rest.NewDefaultTableConvertor(kind.gvr.GroupResource()),
	}
	options := &generic.StoreOptions{RESTOptions: optsGetter}
	if kind.selectableFields != nil {
		options.AttrFunc = func(obj runtime.Object) (labels.Set, fields.Set, error) {
			accessor, err := meta.Accessor(obj)
			if err != nil {
				return nil, nil, err
			}
			set := kind.selectableFields(obj)
			set["metadata.name"], set["metadata.namespace"] = accessor.GetName(), accessor.GetNamespace()
			return accessor.GetLabels(), set, nil
		}
	}
	if err := store.CompleteWithOptions(options); err != nil {
		return nil, fmt.Errorf("storage for %s: %w", kind.gvr.Resource, err)
	}
	storage := map[string]rest.Storage{kind.gvr.Resource: store}
	if kind.hasStatus {
		statusStore := *store
		statusStrategy := &kindStrategy{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator, kind: kind, statusOnly: true}
		statusStore.UpdateStrategy = statusStrategy
		storage[kind.gvr.Resource+"/status"] = &statusREST{store: &statusStore}
	}
	return storage, nil
}

// kindStrategy is the create/update/delete strategy of one built-in kind. With statusOnly it is
// the strategy of the /status subresource: only status changes are kept.
type kindStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	kind       builtinKind
	statusOnly bool
}

func (s *kindStrategy) NamespaceScoped() bool { return s.kind.namespaced }

func (s *kindStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if s.kind.normalize != nil {
		s.kind.normalize(obj)
	}
	accessor, _ := meta.Accessor(obj)
	accessor.SetGeneration(1)
	if s.kind.prepareCreate != nil {
		s.kind.prepareCreate(obj)
	}
}

func (s *kindStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	if s.kind.normalize != nil && !s.statusOnly {
		s.kind.normalize(obj)
	}
	if !s.kind.hasStatus {
		return
	}
	if s.statusOnly {
		// A status write may not change anything else, as on a real API server.
		keep := old.DeepCopyObject()
		setStatus(keep, getStatus(obj))
		newMeta, _ := meta.Accessor(obj)
		rv := newMeta.GetResourceVersion()
		copyInto(obj, keep)
		newMeta.SetResourceVersion(rv)
		return
	}
	setStatus(obj, getStatus(old))
	newMeta, _ := meta.Accessor(obj)
	oldMeta, _ := meta.Accessor(old)
	newMeta.SetGeneration(oldMeta.GetGeneration())
	if !equality.Semantic.DeepEqual(getSpec(obj), getSpec(old)) {
		newMeta.SetGeneration(oldMeta.GetGeneration() + 1)
	}
}

func (s *kindStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessor(accessor, s.kind.namespaced, nameValidator(s.kind), field.NewPath("metadata"))
	if s.kind.validate != nil {
		errs = append(errs, s.kind.validate(obj)...)
	}
	return errs
}

func (s *kindStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	newMeta, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	oldMeta, err := meta.Accessor(old)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	errs := apivalidation.ValidateObjectMetaAccessorUpdate(newMeta, oldMeta, field.NewPath("metadata"))
	if s.statusOnly {
		return errs
	}
	if s.kind.validate != nil {
		errs = append(errs, s.kind.validate(obj)...)
	}
	if s.kind.validateUpdate != nil {
		errs = append(errs, s.kind.validateUpdate(obj, old)...)
	}
	return errs
}

func (s *kindStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (s *kindStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (s *kindStrategy) Canonicalize(runtime.Object)    {}
func (s *kindStrategy) AllowCreateOnUpdate() bool      { return false }
func (s *kindStrategy) AllowUnconditionalUpdate() bool { return true }

// CheckGracefulDelete implements rest.RESTGracefulDeleteStrategy for kinds with a grace period
// (pods): the object stays, with a deletion timestamp, until the kubelet deletes it for good.
func (s *kindStrategy) CheckGracefulDelete(_ context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool {
	if s.kind.gracePeriod == nil || options == nil {
		return false
	}
	period := s.kind.gracePeriod(obj, options.GracePeriodSeconds)
	if period == 0 {
		return false
	}
	options.GracePeriodSeconds = &period
	return true
}

// nameValidator returns the name rule of a kind: services and namespaces need DNS-1035 and
// DNS-1123 labels, everything else a DNS-1123 subdomain.
func nameValidator(kind builtinKind) apivalidation.ValidateNameFunc {
	switch kind.gvr.Resource {
	case "services":
		return apivalidation.NameIsDNS1035Label
	case "namespaces":
		return apivalidation.ValidateNamespaceName
	default:
		return apivalidation.NameIsDNSSubdomain
	}
}

// statusREST serves the /status subresource from a copy of the main store with the status-only
// strategy.
type statusREST struct {
	store *genericregistry.Store
}

var _ rest.Patcher = &statusREST{}

func (r *statusREST) New() runtime.Object { return r.store.New() }
func (r *statusREST) Destroy()            {}

func (r *statusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

func (r *statusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc,
	updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions,
) (runtime.Object, bool, error) {
	// Status writes never create the object.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// getStatus, setStatus and getSpec reach the status and spec of the built-in kinds with status.
func getStatus(obj runtime.Object) any {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.Status
	case *corev1.Service:
		return o.Status
	case *corev1.Namespace:
		return o.Status
	case *networkingv1.Ingress:
		return o.Status
	case *appsv1.StatefulSet:
		return o.Status
	case *autoscalingv2.HorizontalPodAutoscaler:
		return o.Status
	case *policyv1.PodDisruptionBudget:
		return o.Status
	}
	return nil
}

func setStatus(obj runtime.Object, status any) {
	switch o := obj.(type) {
	case *corev1.Pod:
		o.Status = status.(corev1.PodStatus)
	case *corev1.Service:
		o.Status = status.(corev1.ServiceStatus)
	case *corev1.Namespace:
		o.Status = status.(corev1.NamespaceStatus)
	case *networkingv1.Ingress:
		o.Status = status.(networkingv1.IngressStatus)
	case *appsv1.StatefulSet:
		o.Status = status.(appsv1.StatefulSetStatus)
	case *autoscalingv2.HorizontalPodAutoscaler:
		o.Status = status.(autoscalingv2.HorizontalPodAutoscalerStatus)
	case *policyv1.PodDisruptionBudget:
		o.Status = status.(policyv1.PodDisruptionBudgetStatus)
	}
}

func getSpec(obj runtime.Object) any {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.Spec
	case *corev1.Service:
		return o.Spec
	case *corev1.Namespace:
		return o.Spec
	case *networkingv1.Ingress:
		return o.Spec
	case *networkingv1.NetworkPolicy:
		return o.Spec
	case *appsv1.StatefulSet:
		return o.Spec
	case *autoscalingv2.HorizontalPodAutoscaler:
		return o.Spec
	case *policyv1.PodDisruptionBudget:
		return o.Spec
	}
	return nil
}

// copyInto overwrites dst with src; both are pointers to the same built-in type.
func copyInto(dst, src runtime.Object) {
	switch d := dst.(type) {
	case *corev1.Pod:
		*d = *src.(*corev1.Pod)
	case *corev1.Service:
		*d = *src.(*corev1.Service)
	case *corev1.Namespace:
		*d = *src.(*corev1.Namespace)
	case *networkingv1.Ingress:
		*d = *src.(*networkingv1.Ingress)
	case *networkingv1.NetworkPolicy:
		*d = *src.(*networkingv1.NetworkPolicy)
	case *appsv1.StatefulSet:
		*d = *src.(*appsv1.StatefulSet)
	case *autoscalingv2.HorizontalPodAutoscaler:
		*d = *src.(*autoscalingv2.HorizontalPodAutoscaler)
	case *policyv1.PodDisruptionBudget:
		*d = *src.(*policyv1.PodDisruptionBudget)
	}
}

// foldStringData does what the API server's conversion of a written Secret does: stringData
// is write-only, its entries win over data's, and it is never stored.
func foldStringData(secret *corev1.Secret) {
	if len(secret.StringData) == 0 {
		secret.StringData = nil
		return
	}
	if secret.Data == nil {
		secret.Data = make(map[string][]byte, len(secret.StringData))
	}
	for k, v := range secret.StringData {
		secret.Data[k] = []byte(v)
	}
	secret.StringData = nil
}
