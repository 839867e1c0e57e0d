package v1beta2

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateSparkApplication checks what the API server's schema cannot: name rules, fields that
// only make sense together or apart, and the syntax of quantities and Spark settings. It
// accepts both the stored object and one with SetSparkApplicationDefaults applied, and returns
// every problem found, each naming the field and what to do about it.
func ValidateSparkApplication(app *SparkApplication) field.ErrorList {
	errs := validateObjectName(app.Name)
	return append(errs, ValidateSparkApplicationSpec(&app.Spec, app.Namespace, field.NewPath("spec"))...)
}

// DefaultAndValidate applies the defaults to app in place, then validates it: the verdict the
// sync hook decides with and the validating webhook admits by, so that the two never differ.
func DefaultAndValidate(app *SparkApplication) field.ErrorList {
	SetSparkApplicationDefaults(app)
	return ValidateSparkApplication(app)
}

// ValidateScheduledSparkApplication checks a ScheduledSparkApplication and its template. The
// schedule's syntax and time zone are left to the scheduler, which reports them in the status.
func ValidateScheduledSparkApplication(ssa *ScheduledSparkApplication) field.ErrorList {
	errs := validateObjectName(ssa.Name)
	spec := field.NewPath("spec")
	if strings.TrimSpace(ssa.Spec.Schedule) == "" {
		errs = append(errs, field.Required(spec.Child("schedule"), `a cron schedule such as "0 3 * * *" or "@every 1h"`))
	}
	switch ssa.Spec.ConcurrencyPolicy {
	case "", ConcurrencyAllow, ConcurrencyForbid, ConcurrencyReplace:
	default:
		errs = append(errs, field.NotSupported(spec.Child("concurrencyPolicy"), ssa.Spec.ConcurrencyPolicy,
			[]ConcurrencyPolicy{ConcurrencyAllow, ConcurrencyForbid, ConcurrencyReplace}))
	}
	errs = append(errs, nonNegative32(spec, "successfulRunHistoryLimit", ssa.Spec.SuccessfulRunHistoryLimit)...)
	errs = append(errs, nonNegative32(spec, "failedRunHistoryLimit", ssa.Spec.FailedRunHistoryLimit)...)
	if sd := ssa.Spec.StartingDeadlineSeconds; sd != nil && *sd < 0 {
		errs = append(errs, field.Invalid(spec.Child("startingDeadlineSeconds"), *sd, "must not be negative"))
	}
	errs = append(errs, atMostMaxSeconds(spec, "startingDeadlineSeconds", ssa.Spec.StartingDeadlineSeconds,
		"; remove the field to start a missed run however late")...)
	return append(errs, ValidateSparkApplicationSpec(&ssa.Spec.Template, ssa.Namespace, spec.Child("template"))...)
}

// validateObjectName applies the Kubeflow operator's rule, a DNS-1035 label: the name becomes
// the value of the sparkoperator.k8s.io/app-name label (at most 63 characters) and the prefix of
// Service names (which must start with a letter and cannot contain dots).
func validateObjectName(name string) field.ErrorList {
	if name == "" {
		// generateName objects have no name yet; the API server checks the generated one.
		return nil
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name,
			msg+" (the name is used as a label value and as the prefix of Service names)"))
	}
	return errs
}

// ValidateSparkApplicationSpec validates a spec at fldPath. namespace is the namespace the
// application runs in, or "" when unknown.
func ValidateSparkApplicationSpec(spec *SparkApplicationSpec, namespace string, fldPath *field.Path) field.ErrorList {
	v := specValidator{spec: spec, namespace: namespace, path: fldPath}
	v.topLevel()
	v.managedBy()
	v.sparkConf()
	v.volumes()
	driver, executor := fldPath.Child("driver"), fldPath.Child("executor")
	v.role(driver, "driver", &spec.Driver.SparkPodSpec)
	v.role(executor, "executor", &spec.Executor.SparkPodSpec)
	v.driver(driver)
	v.executor(executor)
	v.nodeSelectors()
	v.restartPolicy()
	v.dynamicAllocation()
	v.monitoring()
	v.ui()
	v.extensions()
	return v.errs
}

type specValidator struct {
	spec      *SparkApplicationSpec
	namespace string
	path      *field.Path
	errs      field.ErrorList
}

func (v *specValidator) add(errs ...*field.Error) { v.errs = append(v.errs, errs...) }

var sparkVersionPattern = regexp.MustCompile(`^([0-9]+)\.([0-9]+)(?:\.([0-9]+))?`)

func (v *specValidator) topLevel() {
	s, p := v.spec, v.path
	switch s.Type {
	case "":
		v.add(field.Required(p.Child("type"), "one of Java, Scala, Python or R"))
	case SparkApplicationTypeJava, SparkApplicationTypeScala, SparkApplicationTypePython, SparkApplicationTypeR:
	default:
		v.add(field.NotSupported(p.Child("type"), s.Type, []SparkApplicationType{
			SparkApplicationTypeJava, SparkApplicationTypeScala, SparkApplicationTypePython, SparkApplicationTypeR}))
	}

	if s.SparkVersion == "" {
		v.add(field.Required(p.Child("sparkVersion"), "the Spark version of the image, for example 3.5.5"))
	} else if !sparkVersionPattern.MatchString(s.SparkVersion) {
		v.add(field.Invalid(p.Child("sparkVersion"), s.SparkVersion, "must start with a Spark version number such as 3.5.5 or 4.0.1"))
	}

	switch s.Mode {
	case "", DeployModeCluster:
	default:
		v.add(field.Invalid(p.Child("mode"), s.Mode,
			"only cluster mode is supported (the driver runs in its own Pod); set it to cluster or remove it"))
	}

	if isEmpty(s.MainApplicationFile) {
		jvm := s.Type == SparkApplicationTypeJava || s.Type == SparkApplicationTypeScala
		switch {
		case jvm && !isEmpty(s.MainClass):
			// The class is on the image's classpath; Spark runs it without a primary resource.
		case jvm:
			v.add(field.Required(p.Child("mainApplicationFile"),
				"the application jar, for example local:///opt/spark/examples/jars/spark-examples.jar; it may be omitted only when spec.mainClass names a class already on the image's classpath"))
		default:
			v.add(field.Required(p.Child("mainApplicationFile"),
				"the Python or R file to run, for example local:///opt/spark/examples/src/main/python/pi.py"))
		}
	}

	if s.Image != nil && strings.TrimSpace(*s.Image) == "" {
		v.add(field.Invalid(p.Child("image"), "", "must not be empty; remove it or name an image"))
	}
	for _, role := range []struct {
		name  string
		image *string
	}{{"driver", s.Driver.Image}, {"executor", s.Executor.Image}} {
		// A blank role image is reported by role() instead.
		if role.image == nil && isEmpty(s.Image) {
			v.add(field.Required(p.Child(role.name, "image"),
				fmt.Sprintf("no container image for the %s: set spec.image, or spec.%s.image", role.name, role.name)))
		}
	}
	if s.ImagePullPolicy != nil {
		switch corev1.PullPolicy(*s.ImagePullPolicy) {
		case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		default:
			v.add(field.NotSupported(p.Child("imagePullPolicy"), *s.ImagePullPolicy,
				[]corev1.PullPolicy{corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever}))
		}
	}
	for i, name := range s.ImagePullSecrets {
		v.add(objectReference(p.Child("imagePullSecrets").Index(i), name, "Secret")...)
	}
	if s.SparkConfigMap != nil {
		v.add(objectReference(p.Child("sparkConfigMap"), *s.SparkConfigMap, "ConfigMap")...)
	}
	if s.HadoopConfigMap != nil {
		v.add(objectReference(p.Child("hadoopConfigMap"), *s.HadoopConfigMap, "ConfigMap")...)
	}
	if s.PythonVersion != nil && *s.PythonVersion != "2" && *s.PythonVersion != "3" {
		v.add(field.NotSupported(p.Child("pythonVersion"), *s.PythonVersion, []string{"2", "3"}))
	}
	if s.MemoryOverheadFactor != nil {
		v.add(overheadFactor(p.Child("memoryOverheadFactor"), *s.MemoryOverheadFactor)...)
	}
	if s.TimeToLiveSeconds != nil && *s.TimeToLiveSeconds < 0 {
		v.add(field.Invalid(p.Child("timeToLiveSeconds"), *s.TimeToLiveSeconds,
			"must be >= 0 (0 deletes the application as soon as it terminates; remove the field to keep it)"))
	}
	v.add(atMostMaxSeconds(p, "timeToLiveSeconds", s.TimeToLiveSeconds, "; remove the field to keep the application")...)
	v.dependencies()
	if bs := s.BatchSchedulerOptions; bs != nil {
		for name, q := range bs.Resources {
			if q.Sign() < 0 {
				v.add(field.Invalid(p.Child("batchSchedulerOptions", "resources").Key(string(name)), q.String(), "must be >= 0"))
			}
		}
	}
}

func (v *specValidator) dependencies() {
	for i, pkg := range v.spec.Deps.Packages {
		if !mavenCoordinate(pkg, 3) {
			v.add(field.Invalid(v.path.Child("deps", "packages").Index(i), pkg, "must be a Maven coordinate groupId:artifactId:version"))
		}
	}
	for i, pkg := range v.spec.Deps.ExcludePackages {
		if !mavenCoordinate(pkg, 2) {
			v.add(field.Invalid(v.path.Child("deps", "excludePackages").Index(i), pkg, "must be groupId:artifactId"))
		}
	}
}

func mavenCoordinate(s string, parts int) bool {
	fields := strings.Split(s, ":")
	return len(fields) == parts && !slices.Contains(fields, "")
}

// StandaloneMaster is true for the URL of a standalone cluster's master, which a SparkApplication
// may run its executors on instead of Kubernetes: spark://host:port, or several for standby
// masters.
func StandaloneMaster(master string) bool {
	rest, ok := strings.CutPrefix(strings.TrimSpace(master), "spark://")
	if !ok || rest == "" {
		return false
	}
	for _, hostPort := range strings.Split(rest, ",") {
		host, port, ok := strings.Cut(hostPort, ":")
		if !ok || host == "" || port == "" {
			return false
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	return true
}

// forbiddenConf says why a Spark property may not be set in sparkConf, and what to use
// instead; ok is false for properties the user may set.
func forbiddenConf(key string) (instead string, ok bool) {
	if oauthTokenKey(key) {
		return "an OAuth token would make the driver act as another identity; it authenticates with its ServiceAccount (spec.driver.serviceAccount)", true
	}
	switch key {
	case "spark.master":
		return "sparkhooks sets it to the in-cluster API server; remove it, or name a standalone cluster's master (spark://<cluster>-master-svc:7077)", true
	case "spark.kubernetes.driver.master":
		return "use spec.driver.kubernetesMaster", true
	case "spark.kubernetes.container.image":
		return "use spec.image", true
	case "spark.kubernetes.driver.container.image":
		return "use spec.driver.image", true
	case "spark.kubernetes.executor.container.image":
		return "use spec.executor.image", true
	case "spark.kubernetes.authenticate.driver.serviceAccountName":
		return "use spec.driver.serviceAccount", true
	case "spark.kubernetes.authenticate.executor.serviceAccountName":
		return "use spec.executor.serviceAccount", true
	}
	return "", false
}

// oauthTokenKey is any of Spark's OAuth token properties (spark.kubernetes.authenticate[.submission
// |.driver|.driver.mounted].oauthToken[File]) and any other key of that shape.
func oauthTokenKey(key string) bool {
	return strings.HasPrefix(key, "spark.kubernetes.authenticate.") &&
		(strings.HasSuffix(key, ".oauthToken") || strings.HasSuffix(key, ".oauthTokenFile"))
}

// sparkConf checks the properties the operator owns and the typed ones it reads back when the
// matching spec field is unset.
func (v *specValidator) sparkConf() {
	if len(v.spec.SparkConf) == 0 {
		return
	}
	p := v.path.Child("sparkConf")
	for _, key := range sortedKeys(v.spec.SparkConf) {
		val := v.spec.SparkConf[key]
		kp := p.Key(key)
		if key == "spark.master" && StandaloneMaster(val) {
			continue
		}
		if instead, ok := forbiddenConf(key); ok {
			v.add(field.Forbidden(kp, "set by the operator: "+instead))
			continue
		}
		switch key {
		case confKubernetesNamespace:
			if v.namespace != "" && val != v.namespace {
				v.add(field.Invalid(kp, val, fmt.Sprintf("the application runs in namespace %q; remove the property", v.namespace)))
			}
		case confDriverPodName:
			if v.spec.Driver.PodName == nil {
				v.add(subdomain(kp, val)...)
			}
		case confDriverCores, confExecutorCores:
			if n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 32); err != nil || n <= 0 {
				v.add(field.Invalid(kp, val, "must be a whole number of cores > 0"))
			}
		case confExecutorInstances:
			if n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 32); err != nil || n < 0 {
				v.add(field.Invalid(kp, val, "must be a whole number >= 0"))
			}
		case confDriverMemory, confExecutorMemory:
			v.add(heapMemory(kp, val)...)
		case "spark.driver.memoryOverhead", "spark.executor.memoryOverhead":
			v.add(sparkMemory(kp, val)...)
		}
	}
	// The driver's volumes in Spark's own properties: the builder mounts them, as spark-submit
	// would, so they must make a valid Pod.
	volumes, _, errs := ConfVolumes(v.spec.SparkConf, DriverVolumesPrefix, p)
	v.add(errs...)
	declared := v.volumeNames()
	for _, vol := range volumes {
		if declared[vol.Name] {
			v.add(field.Invalid(p, vol.Name, "the driver volume "+vol.Name+" of "+DriverVolumesPrefix+"* is also a volume in spec.volumes; give one of them another name"))
		}
	}
}

func (v *specValidator) volumes() {
	if len(v.spec.Volumes) == 0 {
		return
	}
	p := v.path.Child("volumes")
	seen := map[string]bool{}
	for i, vol := range v.spec.Volumes {
		np := p.Index(i).Child("name")
		if vol.Name == "" {
			v.add(field.Required(np, "every volume needs a name for volumeMounts to refer to"))
			continue
		}
		for _, msg := range validation.IsDNS1123Label(vol.Name) {
			v.add(field.Invalid(np, vol.Name, msg))
		}
		if seen[vol.Name] {
			v.add(field.Duplicate(np, vol.Name))
		}
		seen[vol.Name] = true
	}
}

func (v *specValidator) volumeNames() map[string]bool {
	names := make(map[string]bool, len(v.spec.Volumes))
	for _, vol := range v.spec.Volumes {
		names[vol.Name] = true
	}
	return names
}

// role checks what the driver and the executors share.
func (v *specValidator) role(p *field.Path, role string, ps *SparkPodSpec) {
	if ps.Image != nil && strings.TrimSpace(*ps.Image) == "" {
		v.add(field.Invalid(p.Child("image"), "", "must not be empty; name an image, or remove it to use spec.image"))
	}
	if ps.Cores != nil && *ps.Cores <= 0 {
		v.add(field.Invalid(p.Child("cores"), *ps.Cores, "must be > 0"))
	}
	var heap int64
	if ps.Memory != nil {
		if problem := heapMemoryProblem(*ps.Memory); problem != "" {
			v.add(field.Invalid(p.Child("memory"), *ps.Memory, problem))
		} else {
			heap, _ = sparkMemoryBytes(*ps.Memory)
		}
	}
	if ps.MemoryOverhead != nil {
		v.add(sparkMemory(p.Child("memoryOverhead"), *ps.MemoryOverhead)...)
	}
	if ps.MemoryLimit != nil {
		limit, err := memoryLimitQuantity(*ps.MemoryLimit)
		switch {
		case err != nil:
			v.add(field.Invalid(p.Child("memoryLimit"), *ps.MemoryLimit, err.Error()))
		case limit.Sign() <= 0:
			v.add(field.Invalid(p.Child("memoryLimit"), *ps.MemoryLimit, "must be > 0"))
		case heap > 0 && limit.Value() < heap:
			v.add(field.Invalid(p.Child("memoryLimit"), *ps.MemoryLimit, fmt.Sprintf(
				"is below %s.memory (%s): the JVM heap alone would exceed the container limit; raise the limit or lower the memory",
				role, *ps.Memory)))
		}
	}
	if ps.CoreLimit != nil {
		v.add(cpuQuantity(p.Child("coreLimit"), *ps.CoreLimit)...)
	}
	if ps.GPU.Requested() {
		gp := p.Child("gpu")
		if ps.GPU.Name == "" {
			v.add(field.Required(gp.Child("name"), "the extended resource name, for example nvidia.com/gpu"))
		} else {
			for _, msg := range content.IsLabelKey(ps.GPU.Name) {
				v.add(field.Invalid(gp.Child("name"), ps.GPU.Name, msg))
			}
		}
		if ps.GPU.Quantity <= 0 {
			v.add(field.Invalid(gp.Child("quantity"), ps.GPU.Quantity, "must be > 0"))
		}
	}
	for i, cm := range ps.ConfigMaps {
		cp := p.Child("configMaps").Index(i)
		v.add(objectReference(cp.Child("name"), cm.Name, "ConfigMap")...)
		v.add(mountPath(cp.Child("path"), cm.Path)...)
	}
	for i, s := range ps.Secrets {
		sp := p.Child("secrets").Index(i)
		v.add(objectReference(sp.Child("name"), s.Name, "Secret")...)
		v.add(mountPath(sp.Child("path"), s.Path)...)
		switch s.Type {
		case SecretTypeGeneric, SecretTypeGCPServiceAccount, SecretTypeHadoopDelegationToken:
		default:
			v.add(field.NotSupported(sp.Child("secretType"), s.Type, []SecretType{
				SecretTypeGeneric, SecretTypeGCPServiceAccount, SecretTypeHadoopDelegationToken}))
		}
	}
	for i, env := range ps.Env {
		v.add(envVarName(p.Child("env").Index(i).Child("name"), env.Name)...)
	}
	for _, name := range sortedKeys(ps.EnvVars) {
		v.add(envVarName(p.Child("envVars").Key(name), name)...)
	}
	for _, name := range sortedKeys(ps.EnvSecretKeyRefs) {
		kp := p.Child("envSecretKeyRefs").Key(name)
		ref := ps.EnvSecretKeyRefs[name]
		v.add(envVarName(kp, name)...)
		v.add(objectReference(kp.Child("name"), ref.Name, "Secret")...)
		if ref.Key == "" {
			v.add(field.Required(kp.Child("key"), "the key of the Secret to read"))
		}
	}
	if len(ps.Labels) > 0 {
		v.add(v.podLabels(ps.Labels, p.Child("labels"))...)
	}
	v.add(validAnnotations(ps.Annotations, p, "annotations")...)
	v.add(validLabels(ps.NodeSelector, p, "nodeSelector")...)

	volumes := v.volumeNames()
	for i, m := range ps.VolumeMounts {
		mp := p.Child("volumeMounts").Index(i)
		switch {
		case m.Name == "":
			v.add(field.Required(mp.Child("name"), "the name of a volume in spec.volumes"))
		case !volumes[m.Name]:
			v.add(field.NotFound(mp.Child("name"), m.Name))
		}
		v.add(mountPath(mp.Child("mountPath"), m.MountPath)...)
	}

	containers := map[string]bool{}
	for _, group := range []struct {
		name string
		list []corev1.Container
	}{{"initContainers", ps.InitContainers}, {"sidecars", ps.Sidecars}} {
		for i, c := range group.list {
			cp := p.Child(group.name).Index(i)
			if c.Name == "" {
				v.add(field.Required(cp.Child("name"), "every container needs a name"))
			} else {
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					v.add(field.Invalid(cp.Child("name"), c.Name, msg))
				}
				if containers[c.Name] {
					v.add(field.Duplicate(cp.Child("name"), c.Name))
				}
				containers[c.Name] = true
			}
			if c.Image == "" {
				v.add(field.Required(cp.Child("image"), "every container needs an image"))
			}
		}
	}
	if ps.SchedulerName != nil {
		v.add(subdomain(p.Child("schedulerName"), *ps.SchedulerName)...)
	}
	if ps.ServiceAccount != nil {
		v.add(objectReference(p.Child("serviceAccount"), *ps.ServiceAccount, "ServiceAccount")...)
	}
	if ps.TerminationGracePeriodSeconds != nil && *ps.TerminationGracePeriodSeconds < 0 {
		v.add(field.Invalid(p.Child("terminationGracePeriodSeconds"), *ps.TerminationGracePeriodSeconds, "must be >= 0"))
	}
	if ps.Template != nil && v.sparkVersionBelow(3, 0) {
		v.add(field.Forbidden(p.Child("template"), fmt.Sprintf(
			"Pod templates need Spark 3.0.0 or later, and spec.sparkVersion is %s", v.spec.SparkVersion)))
	}
	if ps.Template != nil {
		// A Pod has one controller: the SparkApplication is the driver's (Metacontroller sets
		// it), the driver Pod each executor's (Spark sets it). A second would make the API
		// server refuse every Pod.
		for i, ref := range ps.Template.OwnerReferences {
			if ref.Controller != nil && *ref.Controller {
				v.add(field.Forbidden(p.Child("template", "metadata", "ownerReferences").Index(i).Child("controller"),
					"must not be true: the "+role+" Pod's controller is set by sparkhooks and Spark; other owner references are kept"))
			}
		}
	}
}

func (v *specValidator) driver(p *field.Path) {
	d := &v.spec.Driver
	if d.PodName != nil {
		v.add(subdomain(p.Child("podName"), *d.PodName)...)
	}
	request, known := v.coreRequest(p, d.CoreRequest, d.Cores)
	v.coreRequestWithinLimit(p, request, known, d.CoreLimit)
	v.add(validLabels(d.ServiceLabels, p, "serviceLabels")...)
	v.add(validAnnotations(d.ServiceAnnotations, p, "serviceAnnotations")...)
	if len(d.Ports) > 0 {
		v.add(ports(p.Child("ports"), d.Ports)...)
	}
	if d.PriorityClassName != nil {
		v.add(subdomain(p.Child("priorityClassName"), *d.PriorityClassName)...)
	}
	if d.KubernetesMaster != nil && strings.TrimSpace(*d.KubernetesMaster) == "" {
		v.add(field.Invalid(p.Child("kubernetesMaster"), "", "must not be empty; remove it to use https://kubernetes.default.svc"))
	}
}

func (v *specValidator) executor(p *field.Path) {
	e := &v.spec.Executor
	if e.Instances != nil && *e.Instances < 1 {
		v.add(field.Invalid(p.Child("instances"), *e.Instances,
			"must be >= 1; to let Spark scale executors, remove it and enable spec.dynamicAllocation"))
	}
	request, known := v.coreRequest(p, e.CoreRequest, e.Cores)
	v.coreRequestWithinLimit(p, request, known, e.CoreLimit)
	if len(e.Ports) > 0 {
		v.add(ports(p.Child("ports"), e.Ports)...)
	}
	if e.PriorityClassName != nil {
		v.add(subdomain(p.Child("priorityClassName"), *e.PriorityClassName)...)
	}
}

// coreRequest returns the CPU request Spark will put on the container: coreRequest if set,
// else cores. ok is false when it cannot be known or is invalid (reported here).
func (v *specValidator) coreRequest(p *field.Path, coreRequest *string, cores *int32) (request resource.Quantity, ok bool) {
	if coreRequest != nil {
		errs := cpuQuantity(p.Child("coreRequest"), *coreRequest)
		v.add(errs...)
		if len(errs) > 0 {
			return resource.Quantity{}, false
		}
		return resource.MustParse(strings.TrimSpace(*coreRequest)), true
	}
	if cores != nil && *cores > 0 {
		return *resource.NewQuantity(int64(*cores), resource.DecimalSI), true
	}
	return resource.Quantity{}, false
}

func (v *specValidator) coreRequestWithinLimit(p *field.Path, request resource.Quantity, known bool, coreLimit *string) {
	if !known || coreLimit == nil {
		return
	}
	limit, err := resource.ParseQuantity(strings.TrimSpace(*coreLimit))
	if err != nil || request.Cmp(limit) <= 0 {
		return
	}
	v.add(field.Invalid(p.Child("coreLimit"), *coreLimit, fmt.Sprintf(
		"is below the CPU request %s (coreRequest, or cores when coreRequest is unset); Kubernetes rejects a Pod whose request exceeds its limit",
		request.String())))
}

func (v *specValidator) nodeSelectors() {
	if len(v.spec.NodeSelector) == 0 {
		return
	}
	v.add(metav1validation.ValidateLabels(v.spec.NodeSelector, v.path.Child("nodeSelector"))...)
	for _, role := range []struct {
		name string
		sel  map[string]string
	}{{"driver", v.spec.Driver.NodeSelector}, {"executor", v.spec.Executor.NodeSelector}} {
		if len(role.sel) > 0 {
			v.add(field.Forbidden(v.path.Child(role.name, "nodeSelector"),
				"cannot be combined with spec.nodeSelector: put all keys either in spec.nodeSelector, or in spec.driver.nodeSelector and spec.executor.nodeSelector"))
		}
	}
}

func (v *specValidator) restartPolicy() {
	rp, p := &v.spec.RestartPolicy, v.path.Child("restartPolicy")
	switch rp.Type {
	case "", RestartPolicyNever, RestartPolicyOnFailure, RestartPolicyAlways:
	default:
		v.add(field.NotSupported(p.Child("type"), rp.Type,
			[]RestartPolicyType{RestartPolicyNever, RestartPolicyOnFailure, RestartPolicyAlways}))
	}
	v.add(nonNegative32(p, "onSubmissionFailureRetries", rp.OnSubmissionFailureRetries)...)
	v.add(nonNegative32(p, "onFailureRetries", rp.OnFailureRetries)...)
	v.add(positiveSeconds(p, "onSubmissionFailureRetryInterval", rp.OnSubmissionFailureRetryInterval)...)
	v.add(positiveSeconds(p, "onFailureRetryInterval", rp.OnFailureRetryInterval)...)
	v.add(atMostMaxSeconds(p, "onSubmissionFailureRetryInterval", rp.OnSubmissionFailureRetryInterval, "")...)
	v.add(atMostMaxSeconds(p, "onFailureRetryInterval", rp.OnFailureRetryInterval, "")...)
}

// dynamicAllocation checks the bounds Spark's ExecutorAllocationManager would reject at start,
// plus an initial size outside them, which Spark silently raises or lowers.
func (v *specValidator) dynamicAllocation() {
	da := v.spec.DynamicAllocation
	if da == nil || !da.Enabled {
		return
	}
	p := v.path.Child("dynamicAllocation")
	v.add(nonNegative32(p, "minExecutors", da.MinExecutors)...)
	v.add(nonNegative32(p, "initialExecutors", da.InitialExecutors)...)
	if da.ShuffleTrackingTimeout != nil && *da.ShuffleTrackingTimeout < 0 {
		v.add(field.Invalid(p.Child("shuffleTrackingTimeout"), *da.ShuffleTrackingTimeout, "must be >= 0 milliseconds"))
	}
	if da.MaxExecutors == nil {
		return
	}
	maxN := *da.MaxExecutors
	if maxN < 1 {
		v.add(field.Invalid(p.Child("maxExecutors"), maxN, "must be >= 1"))
		return
	}
	if da.MinExecutors != nil && *da.MinExecutors > maxN {
		v.add(field.Invalid(p.Child("minExecutors"), *da.MinExecutors,
			fmt.Sprintf("must be <= dynamicAllocation.maxExecutors (%d)", maxN)))
	}
	if da.InitialExecutors != nil && *da.InitialExecutors > maxN {
		v.add(field.Invalid(p.Child("initialExecutors"), *da.InitialExecutors,
			fmt.Sprintf("must be <= dynamicAllocation.maxExecutors (%d)", maxN)))
	}
	if n := v.spec.Executor.Instances; n != nil && *n > maxN {
		v.add(field.Invalid(v.path.Child("executor", "instances"), *n, fmt.Sprintf(
			"with dynamic allocation Spark starts max(instances, initialExecutors, minExecutors) executors, which must be <= dynamicAllocation.maxExecutors (%d)",
			maxN)))
	}
}

func (v *specValidator) monitoring() {
	m := v.spec.Monitoring
	if m == nil || m.Prometheus == nil {
		return
	}
	p := v.path.Child("monitoring", "prometheus")
	if strings.TrimSpace(m.Prometheus.JmxExporterJar) == "" {
		v.add(field.Required(p.Child("jmxExporterJar"), "the path of the Prometheus JMX exporter jar in the image"))
	}
	if port := m.Prometheus.Port; port != nil && (*port < 1024 || *port > 49151) {
		v.add(field.Invalid(p.Child("port"), *port, "must be between 1024 and 49151"))
	}
	if m.Prometheus.PortName != nil {
		for _, msg := range validation.IsValidPortName(*m.Prometheus.PortName) {
			v.add(field.Invalid(p.Child("portName"), *m.Prometheus.PortName, msg))
		}
	}
}

func (v *specValidator) ui() {
	if ui := v.spec.SparkUIOptions; ui != nil {
		p := v.path.Child("sparkUIOptions")
		if ui.ServicePort != nil {
			v.add(portNumber(p.Child("servicePort"), *ui.ServicePort)...)
		}
		if ui.ServicePortName != nil {
			for _, msg := range validation.IsValidPortName(*ui.ServicePortName) {
				v.add(field.Invalid(p.Child("servicePortName"), *ui.ServicePortName, msg))
			}
		}
		v.add(serviceType(p.Child("serviceType"), ui.ServiceType)...)
		v.add(validLabels(ui.ServiceLabels, p, "serviceLabels")...)
		v.add(validAnnotations(ui.ServiceAnnotations, p, "serviceAnnotations")...)
		v.add(validAnnotations(ui.IngressAnnotations, p, "ingressAnnotations")...)
		v.add(ValidateHTTPRouteConfiguration(ui.HTTPRoute, p.Child("httpRoute"))...)
	}

	ports := map[int32]bool{}
	formats := map[string]bool{}
	for i, opt := range v.spec.DriverIngressOptions {
		p := v.path.Child("driverIngressOptions").Index(i)
		if opt.ServicePort == nil {
			v.add(field.Required(p.Child("servicePort"), "the driver port to expose"))
		} else {
			v.add(portNumber(p.Child("servicePort"), *opt.ServicePort)...)
			if ports[*opt.ServicePort] {
				v.add(field.Duplicate(p.Child("servicePort"), *opt.ServicePort))
			}
			ports[*opt.ServicePort] = true
		}
		if opt.ServicePortName == nil || *opt.ServicePortName == "" {
			v.add(field.Required(p.Child("servicePortName"), "a port name such as http"))
		} else {
			for _, msg := range validation.IsValidPortName(*opt.ServicePortName) {
				v.add(field.Invalid(p.Child("servicePortName"), *opt.ServicePortName, msg))
			}
		}
		switch {
		case strings.TrimSpace(opt.IngressURLFormat) == "" && opt.HTTPRoute == nil && opt.GRPCRoute == nil:
			v.add(field.Required(p.Child("ingressURLFormat"), "the Ingress URL, for example {{$appName}}.spark.example.com, or an httpRoute or grpcRoute"))
		case strings.TrimSpace(opt.IngressURLFormat) != "":
			if formats[opt.IngressURLFormat] {
				v.add(field.Duplicate(p.Child("ingressURLFormat"), opt.IngressURLFormat))
			}
			formats[opt.IngressURLFormat] = true
		}
		v.add(serviceType(p.Child("serviceType"), opt.ServiceType)...)
		v.add(validLabels(opt.ServiceLabels, p, "serviceLabels")...)
		v.add(validAnnotations(opt.ServiceAnnotations, p, "serviceAnnotations")...)
		v.add(validAnnotations(opt.IngressAnnotations, p, "ingressAnnotations")...)
		v.add(ValidateHTTPRouteConfiguration(opt.HTTPRoute, p.Child("httpRoute"))...)
		v.add(ValidateGRPCRouteConfiguration(opt.GRPCRoute, p.Child("grpcRoute"))...)
	}
}

func (v *specValidator) extensions() {
	if t := v.spec.Timeouts; t != nil {
		p := v.path.Child("timeouts")
		for _, f := range []struct {
			name  string
			value *int64
		}{
			{"driverStartSeconds", t.DriverStartSeconds},
			{"driverReadySeconds", t.DriverReadySeconds},
			{"executorsStartSeconds", t.ExecutorsStartSeconds},
		} {
			if f.value != nil && *f.value <= 0 {
				v.add(field.Invalid(p.Child(f.name), *f.value, "must be > 0 seconds; remove it for no timeout"))
			}
			v.add(atMostMaxSeconds(p, f.name, f.value, "; remove it for no timeout")...)
		}
	}
	if rp := v.spec.ResourceRetainPolicy; rp != nil {
		switch *rp {
		case ResourceRetainPolicyAlways, ResourceRetainPolicyOnFailure, ResourceRetainPolicyNever:
		default:
			v.add(field.NotSupported(v.path.Child("resourceRetainPolicy"), *rp, []ResourceRetainPolicy{
				ResourceRetainPolicyAlways, ResourceRetainPolicyOnFailure, ResourceRetainPolicyNever}))
		}
	}
}

// sparkVersionBelow reports whether spec.sparkVersion is known and older than major.minor.
func (v *specValidator) sparkVersionBelow(major, minor int) bool {
	m := sparkVersionPattern.FindStringSubmatch(v.spec.SparkVersion)
	if m == nil {
		return false
	}
	gotMajor, _ := strconv.Atoi(m[1])
	gotMinor, _ := strconv.Atoi(m[2])
	return gotMajor < major || (gotMajor == major && gotMinor < minor)
}

func heapMemory(p *field.Path, s string) field.ErrorList {
	if problem := heapMemoryProblem(s); problem != "" {
		return field.ErrorList{field.Invalid(p, s, problem)}
	}
	return nil
}

// heapMemoryProblem says what is wrong with a JVM heap size, "" when nothing is.
func heapMemoryProblem(s string) string {
	n, err := sparkMemoryBytes(s)
	if err != nil {
		return err.Error()
	}
	if n < MiB {
		return "must be at least 1m: Spark counts this memory in whole MiB"
	}
	return ""
}

func sparkMemory(p *field.Path, s string) field.ErrorList {
	if _, err := sparkMemoryBytes(s); err != nil {
		return field.ErrorList{field.Invalid(p, s, err.Error())}
	}
	return nil
}

func overheadFactor(p *field.Path, s string) field.ErrorList {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return field.ErrorList{field.Invalid(p, s, "must be a decimal number such as 0.1")}
	}
	if f <= 0 {
		return field.ErrorList{field.Invalid(p, s, "must be > 0")}
	}
	return nil
}

func cpuQuantity(p *field.Path, s string) field.ErrorList {
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return field.ErrorList{field.Invalid(p, s, `must be a Kubernetes CPU quantity such as "1", "0.5" or "500m"`)}
	}
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(p, s, "must be > 0")}
	}
	return nil
}

// Checks of optional fields take the parent path and the field's name, and build the field's
// path only for an error: a sync validates every spec, and most fields are fine or unset.

func nonNegative32(parent *field.Path, name string, n *int32) field.ErrorList {
	if n != nil && *n < 0 {
		return field.ErrorList{field.Invalid(parent.Child(name), *n, "must be >= 0")}
	}
	return nil
}

func positiveSeconds(parent *field.Path, name string, n *int64) field.ErrorList {
	if n != nil && *n <= 0 {
		return field.ErrorList{field.Invalid(parent.Child(name), *n, "must be > 0 seconds")}
	}
	return nil
}

// atMostMaxSeconds refuses a number of seconds above MaxSeconds; hint, if any, is appended to
// the message.
func atMostMaxSeconds(parent *field.Path, name string, n *int64, hint string) field.ErrorList {
	if n != nil && *n > MaxSeconds {
		return field.ErrorList{field.Invalid(parent.Child(name), *n,
			fmt.Sprintf("must be at most %d seconds (10 years)%s", MaxSeconds, hint))}
	}
	return nil
}

// appIDPlaceholder in a driver or executor label or annotation becomes the application's id
// (spark-<32 hex>): in labels from Spark 4.0, which is when Spark substitutes it there too.
const appIDPlaceholder = "{{APP_ID}}"

// podLabels checks a role's labels as they reach the Pods: from Spark 4.0 with {{APP_ID}}
// replaced by an application id, since that is what Spark and the builder write. Older Spark
// writes the placeholder itself, which no label value can be, so it is refused with the reason.
func (v *specValidator) podLabels(m map[string]string, p *field.Path) field.ErrorList {
	placeholder := false
	for _, value := range m {
		placeholder = placeholder || strings.Contains(value, appIDPlaceholder)
	}
	if !placeholder {
		if len(m) == 0 {
			return nil
		}
		return metav1validation.ValidateLabels(m, p)
	}
	var errs field.ErrorList
	for _, k := range sortedKeys(m) {
		value := m[k]
		if strings.Contains(value, appIDPlaceholder) {
			if v.sparkVersionBelow(4, 0) {
				errs = append(errs, field.Invalid(p.Key(k), value, appIDPlaceholder+" in a label is replaced from Spark 4.0 on; "+
					"Spark "+v.spec.SparkVersion+" would write it as it is, which is not a valid label value"))
				continue
			}
			value = strings.ReplaceAll(value, appIDPlaceholder, "spark-0123456789abcdef0123456789abcdef")
			for _, err := range metav1validation.ValidateLabels(map[string]string{k: value}, p) {
				err.Detail += " (with " + appIDPlaceholder + " replaced by an application id, 38 characters)"
				errs = append(errs, err)
			}
			continue
		}
		errs = append(errs, metav1validation.ValidateLabels(map[string]string{k: value}, p)...)
	}
	return errs
}

func validLabels(m map[string]string, parent *field.Path, name string) field.ErrorList {
	if len(m) == 0 {
		return nil
	}
	return metav1validation.ValidateLabels(m, parent.Child(name))
}

func validAnnotations(m map[string]string, parent *field.Path, name string) field.ErrorList {
	if len(m) == 0 {
		return nil
	}
	return apivalidation.ValidateAnnotations(m, parent.Child(name))
}

func portNumber(p *field.Path, port int32) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortNum(int(port)) {
		errs = append(errs, field.Invalid(p, port, msg))
	}
	return errs
}

func ports(p *field.Path, list []Port) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range list {
		ip := p.Index(i)
		if port.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), "a port name such as http"))
		} else {
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), port.Name, msg))
			}
			if names[port.Name] {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			}
			names[port.Name] = true
		}
		switch corev1.Protocol(port.Protocol) {
		case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			errs = append(errs, field.NotSupported(ip.Child("protocol"), port.Protocol,
				[]corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}))
		}
		errs = append(errs, portNumber(ip.Child("containerPort"), port.ContainerPort)...)
	}
	return errs
}

func serviceType(p *field.Path, t *corev1.ServiceType) field.ErrorList {
	if t == nil {
		return nil
	}
	switch *t {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
		return nil
	}
	return field.ErrorList{field.NotSupported(p, *t, []corev1.ServiceType{
		corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer})}
}

func objectReference(p *field.Path, name, kind string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "the name of a "+kind+" in the application's namespace")}
	}
	return subdomain(p, name)
}

func subdomain(p *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func mountPath(p *field.Path, s string) field.ErrorList {
	if s == "" {
		return field.ErrorList{field.Required(p, "an absolute path in the container, for example /etc/app")}
	}
	if !path.IsAbs(s) {
		return field.ErrorList{field.Invalid(p, s, "must be an absolute path")}
	}
	return nil
}

func envVarName(p *field.Path, name string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsEnvVarName(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func isEmpty(s *string) bool { return s == nil || strings.TrimSpace(*s) == "" }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
