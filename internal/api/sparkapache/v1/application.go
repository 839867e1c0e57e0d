package v1

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// Apache's defaults, where they differ from the attempt core's.
const (
	defaultMaxRestartAttempts   = 3
	defaultRestartBackoffMillis = 30000
	defaultTimeoutMillis        = 300000
	// pythonRunner as mainClass runs the first of pyFiles.
	pythonRunner = "org.apache.spark.deploy.PythonRunner"
	// sparkVersionPlaceholder in an image is replaced by runtimeVersions.sparkVersion.
	sparkVersionPlaceholder = "{{SPARK_VERSION}}"
)

// The sparkConf keys that become typed fields of the application the core builds.
const (
	confImage                  = "spark.kubernetes.container.image"
	confDriverImage            = "spark.kubernetes.driver.container.image"
	confExecutorImage          = "spark.kubernetes.executor.container.image"
	confDriverServiceAccount   = "spark.kubernetes.authenticate.driver.serviceAccountName"
	confExecutorServiceAccount = "spark.kubernetes.authenticate.executor.serviceAccountName"
	confDriverPodName          = "spark.kubernetes.driver.pod.name"
	confFiles                  = "spark.files"
)

// legacySparkVersion is a version as the Apache operator's earlier API spelt it, an enum
// constant such as v4_2_0 (v3_5_1, v4_0_0), which its e2e suite still writes.
var legacySparkVersion = regexp.MustCompile(`^v([0-9]+)_([0-9]+)(?:_([0-9]+))?$`)

// coreSparkVersion is runtimeVersions.sparkVersion as the version number the core reads (its
// Spark-version rules, the spark-version label): Apache's operator takes any string, and
// v4_2_0 is 4.2.0. Other spellings are kept, for the core's validation to judge.
func coreSparkVersion(v string) string {
	m := legacySparkVersion.FindStringSubmatch(v)
	if m == nil {
		return v
	}
	if m[3] == "" {
		return m[1] + "." + m[2]
	}
	return m[1] + "." + m[2] + "." + m[3]
}

// DriverPodName is the driver Pod's name: Apache's name for the first attempt,
// <name>-0-driver, unless sparkConf names it. Every attempt reuses it (docs/apache.md).
func DriverPodName(app *SparkApplication) string {
	if name := app.Spec.SparkConf[confDriverPodName]; name != "" {
		return name
	}
	return app.Name + "-0-driver"
}

// DecodeSparkApplication decodes a stored application; a spec that does not decode comes back
// as field errors, the user's to fix, not as a failure to read the object.
func DecodeSparkApplication(raw []byte) (*SparkApplication, field.ErrorList, error) {
	if obj := new(SparkApplication); json.Unmarshal(raw, obj) == nil {
		return obj, nil, nil
	}
	var stored struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata,omitempty"`
		Spec              json.RawMessage   `json:"spec"`
		Status            ApplicationStatus `json:"status,omitempty"`
	}
	if err := json.Unmarshal(raw, &stored); err != nil {
		return nil, nil, err
	}
	app := &SparkApplication{TypeMeta: stored.TypeMeta, ObjectMeta: stored.ObjectMeta, Status: stored.Status}
	return app, v1beta2.DecodeSpec(stored.Spec, &app.Spec), nil
}

// CoreApplication is the Kubeflow-API SparkApplication an Apache application runs as: the same
// driver, properties and executor template, built by internal/driver, and the same attempt
// state machine, internal/sparkapp. It carries the Apache object's identity and type, so that
// the executors' owner reference and the Events name the Apache object. The status is the
// caller's to set. retain is the retain policy in force now (see EffectiveRetainPolicy).
func CoreApplication(app *SparkApplication, retain v1beta2.ResourceRetainPolicy) *v1beta2.SparkApplication {
	spec := &app.Spec
	conf := maps.Clone(spec.SparkConf)
	take := func(key string) *string {
		v, ok := conf[key]
		if !ok {
			return nil
		}
		delete(conf, key)
		v = strings.ReplaceAll(v, sparkVersionPlaceholder, spec.RuntimeVersions.SparkVersion)
		return &v
	}
	out := v1beta2.SparkApplicationSpec{
		SparkVersion: coreSparkVersion(spec.RuntimeVersions.SparkVersion),
		Mode:         v1beta2.DeployModeCluster,
		Image:        take(confImage),
		Arguments:    spec.DriverArgs,
	}
	if spec.MainClass != "" {
		out.MainClass = ptr.To(spec.MainClass)
	}
	if spec.ProxyUser != "" {
		out.ProxyUser = ptr.To(spec.ProxyUser)
	}
	out.Driver.Image = take(confDriverImage)
	out.Executor.Image = take(confExecutorImage)
	out.Driver.ServiceAccount = take(confDriverServiceAccount)
	out.Executor.ServiceAccount = take(confExecutorServiceAccount)
	delete(conf, confDriverPodName)
	out.Driver.PodName = ptr.To(DriverPodName(app))
	primary(spec, &out)
	if spec.Files != "" {
		if _, set := conf[confFiles]; !set {
			out.Deps.Files = splitList(spec.Files)
		}
	}
	if len(conf) > 0 {
		out.SparkConf = conf
	}
	if d := spec.DriverSpec; d != nil && d.PodTemplateSpec != nil {
		out.Driver.Template = d.PodTemplateSpec.DeepCopy()
	}
	if e := spec.ExecutorSpec; e != nil && e.PodTemplateSpec != nil {
		out.Executor.Template = e.PodTemplateSpec.DeepCopy()
	}
	tol := tolerations(app)
	out.RestartPolicy = restartPolicy(tol.RestartConfig)
	out.Timeouts = timeouts(tol)
	out.ResourceRetainPolicy = ptr.To(retain)
	if ttl := tol.TTLAfterStopMillis; ttl != nil && *ttl >= 0 {
		out.TimeToLiveSeconds = ptr.To(ceilSeconds(*ttl))
	}
	return &v1beta2.SparkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: KindSparkApplication},
		ObjectMeta: *app.ObjectMeta.DeepCopy(),
		Spec:       out,
	}
}

// primary sets the primary resource as Apache chooses it: jars, else pyFiles, else
// sparkRFiles; the first entry runs, the others are dependencies.
func primary(spec *ApplicationSpec, out *v1beta2.SparkApplicationSpec) {
	switch {
	case spec.Jars != "":
		jars := splitList(spec.Jars)
		out.Type = v1beta2.SparkApplicationTypeJava
		out.MainApplicationFile = ptr.To(jars[0])
		out.Deps.Jars = jars[1:]
	case spec.PyFiles != "":
		py := splitList(spec.PyFiles)
		out.Type = v1beta2.SparkApplicationTypePython
		out.MainApplicationFile = ptr.To(py[0])
		out.Deps.PyFiles = py[1:]
		if spec.MainClass == pythonRunner {
			out.MainClass = nil // the Python runner is how a Python application runs anyway
		}
	case spec.SparkRFiles != "":
		r := splitList(spec.SparkRFiles)
		out.Type = v1beta2.SparkApplicationTypeR
		out.MainApplicationFile = ptr.To(r[0])
		out.Deps.Files = append(out.Deps.Files, r[1:]...)
	default:
		out.Type = v1beta2.SparkApplicationTypeJava // a main class on the image's class path
	}
	if len(out.Deps.Jars) == 0 {
		out.Deps.Jars = nil
	}
	if len(out.Deps.PyFiles) == 0 {
		out.Deps.PyFiles = nil
	}
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

func tolerations(app *SparkApplication) ApplicationTolerations {
	if t := app.Spec.ApplicationTolerations; t != nil {
		return *t
	}
	return ApplicationTolerations{}
}

// restartPolicy maps Apache's restart policy onto the core's. OnFailure retries runs up to the
// tighter of maxRestartAttempts and maxRestartOnFailure, and driver Pods that never appeared
// (Apache's SchedulingFailure) up to maxRestartOnSchedulingFailure when set; the waits are
// Apache's back-offs in whole seconds. Always restarts without limit (ValidateSparkApplication
// refuses a finite maxRestartAttempts with it).
func restartPolicy(rc *RestartConfig) v1beta2.RestartPolicy {
	if rc == nil {
		rc = &RestartConfig{}
	}
	switch rc.RestartPolicy {
	case RestartAlways:
		backoff := backoffSeconds(rc.RestartBackoffMillis, nil, nil)
		return v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyAlways, OnFailureRetryInterval: backoff, OnSubmissionFailureRetryInterval: backoff}
	case RestartOnFailure:
		limit := int64(defaultMaxRestartAttempts)
		if rc.MaxRestartAttempts != nil {
			limit = *rc.MaxRestartAttempts
		}
		onFailure := limit
		if rc.MaxRestartOnFailure != nil {
			onFailure = min(onFailure, *rc.MaxRestartOnFailure)
		}
		onScheduling := onFailure
		if rc.MaxRestartOnSchedulingFailure != nil {
			onScheduling = min(limit, *rc.MaxRestartOnSchedulingFailure)
		}
		return v1beta2.RestartPolicy{
			Type:                             v1beta2.RestartPolicyOnFailure,
			OnFailureRetries:                 ptr.To(clampInt32(onFailure)),
			OnSubmissionFailureRetries:       ptr.To(clampInt32(onScheduling)),
			OnFailureRetryInterval:           backoffSeconds(rc.RestartBackoffMillis, rc.RestartBackoffMillisForFailure, nil),
			OnSubmissionFailureRetryInterval: backoffSeconds(rc.RestartBackoffMillis, rc.RestartBackoffMillisForFailure, rc.RestartBackoffMillisForSchedulingFailure),
		}
	}
	return v1beta2.RestartPolicy{Type: v1beta2.RestartPolicyNever}
}

// backoffSeconds is the most specific back-off set, in whole seconds (at least one, the core's
// least wait).
func backoffSeconds(base, failure, scheduling *int64) *int64 {
	ms := int64(defaultRestartBackoffMillis)
	for _, v := range []*int64{base, failure, scheduling} {
		if v != nil {
			ms = *v
		}
	}
	return ptr.To(max(1, ceilSeconds(ms)))
}

// timeouts maps Apache's start-up timeouts (on by default, 5 minutes each) onto the core's.
// The executors' one applies only with initExecutors, as in Apache: without it the driver
// being ready is RunningHealthy.
func timeouts(tol ApplicationTolerations) *v1beta2.SparkApplicationTimeouts {
	tc := tol.ApplicationTimeoutConfig
	if tc == nil {
		tc = &ApplicationTimeoutConfig{}
	}
	seconds := func(v *int64) *int64 {
		ms := int64(defaultTimeoutMillis)
		if v != nil {
			ms = *v
		}
		if ms <= 0 {
			return nil
		}
		return ptr.To(ceilSeconds(ms))
	}
	out := &v1beta2.SparkApplicationTimeouts{
		DriverStartSeconds: seconds(tc.DriverStartTimeoutMillis),
		DriverReadySeconds: seconds(tc.DriverReadyTimeoutMillis),
	}
	if ic := tol.InstanceConfig; ic != nil && ic.InitExecutors > 0 {
		out.ExecutorsStartSeconds = seconds(tc.ExecutorStartTimeoutMillis)
	}
	if *out == (v1beta2.SparkApplicationTimeouts{}) {
		return nil
	}
	return out
}

// EffectiveRetainPolicy is the core's retain policy for an application whose last attempt
// stopped at stopped (zero while it runs): Apache's policy, Never by default, turned Never once
// the retain duration (the lesser of resourceRetainDurationMillis and ttlAfterStopMillis that
// is not negative) has passed since the stop. due is when that happens; zero when it never
// does or has.
func EffectiveRetainPolicy(app *SparkApplication, stopped, now metav1.Time) (policy v1beta2.ResourceRetainPolicy, due metav1.Time) {
	tol := tolerations(app)
	switch tol.ResourceRetainPolicy {
	case RetainAlways:
		policy = v1beta2.ResourceRetainPolicyAlways
	case RetainOnFailure:
		policy = v1beta2.ResourceRetainPolicyOnFailure
	default:
		return v1beta2.ResourceRetainPolicyNever, metav1.Time{}
	}
	retain := int64(-1)
	for _, v := range []*int64{tol.ResourceRetainDurationMillis, tol.TTLAfterStopMillis} {
		if v != nil && *v >= 0 && (retain < 0 || *v < retain) {
			retain = *v
		}
	}
	if retain < 0 || stopped.IsZero() {
		return policy, metav1.Time{}
	}
	end := stopped.Add(v1beta2.Seconds(ceilSeconds(retain)))
	if !now.Time.Before(end) {
		return v1beta2.ResourceRetainPolicyNever, metav1.Time{}
	}
	return policy, metav1.NewTime(end)
}

// ceilSeconds turns milliseconds into whole seconds, rounding up: a deadline is never earlier
// than the user asked.
func ceilSeconds(ms int64) int64 {
	if ms <= 0 {
		return 0
	}
	return (ms-1)/1000 + 1
}

func clampInt32(n int64) int32 {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(max(n, 0))
}

// ValidateSparkApplication checks an application as the hooks and the validating webhook do:
// what sparkhooks cannot honour of Apache's spec, refused with the reason, then every rule of
// the SparkApplication it runs as, at the Apache field paths.
func ValidateSparkApplication(app *SparkApplication) field.ErrorList {
	errs := refusals(app)
	core := CoreApplication(app, v1beta2.ResourceRetainPolicyNever)
	for _, e := range v1beta2.DefaultAndValidate(core) {
		e := *e
		e.Field = apachePath(e.Field)
		e.Detail = apacheDetail(e.Detail)
		errs = append(errs, &e)
	}
	return errs
}

// refusals are the parts of an Apache spec sparkhooks cannot honour, each with why.
func refusals(app *SparkApplication) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if q, ok := app.Labels[kueueQueueNameLabel]; ok {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "labels").Key(kueueQueueNameLabel),
			fmt.Sprintf("sparkhooks queues Apache SparkApplications with Kueue only from Apache operator 1.1's spec.suspend on, which this API version lacks; use a sparkoperator.k8s.io/v1beta2 SparkApplication, or remove the label (%q)", q)))
	}
	if app.Spec.RuntimeVersions.SparkVersion == "" {
		errs = append(errs, field.Required(spec.Child("runtimeVersions", "sparkVersion"), "the Spark version of the image, for example 4.0.1"))
	}
	if app.Spec.DeploymentMode == DeploymentModeClient {
		errs = append(errs, field.NotSupported(spec.Child("deploymentMode"), app.Spec.DeploymentMode, []string{DeploymentModeCluster}))
	}
	errs = append(errs, exposureErrors(&app.Spec)...)
	tol := tolerations(app)
	tp := spec.Child("applicationTolerations")
	if rc := tol.RestartConfig; rc != nil {
		rp := tp.Child("restartConfig")
		switch rc.RestartPolicy {
		case RestartOnInfrastructureFailure:
			errs = append(errs, field.NotSupported(rp.Child("restartPolicy"), rc.RestartPolicy, []string{RestartNever, RestartOnFailure, RestartAlways}))
		case RestartAlways:
			if rc.MaxRestartAttempts == nil || *rc.MaxRestartAttempts < math.MaxInt32 {
				errs = append(errs, field.Invalid(rp.Child("maxRestartAttempts"), ptr.Deref(rc.MaxRestartAttempts, defaultMaxRestartAttempts),
					fmt.Sprintf("with restartPolicy Always sparkhooks restarts without limit: set maxRestartAttempts to %d or more, or use OnFailure", math.MaxInt32)))
			}
		}
		if v := rc.RestartCounterResetMillis; v != nil && *v >= 0 {
			errs = append(errs, field.Invalid(rp.Child("restartCounterResetMillis"), *v, "sparkhooks does not reset the restart counters after a long attempt: leave it at -1"))
		}
		for _, f := range []struct {
			name string
			v    *int64
		}{{"maxRestartAttempts", rc.MaxRestartAttempts}, {"maxRestartOnFailure", rc.MaxRestartOnFailure}, {"maxRestartOnSchedulingFailure", rc.MaxRestartOnSchedulingFailure},
			{"restartBackoffMillis", rc.RestartBackoffMillis}, {"restartBackoffMillisForFailure", rc.RestartBackoffMillisForFailure}, {"restartBackoffMillisForSchedulingFailure", rc.RestartBackoffMillisForSchedulingFailure}} {
			if f.v != nil && *f.v < 0 {
				errs = append(errs, field.Invalid(rp.Child(f.name), *f.v, "must be >= 0"))
			}
		}
	}
	if tc := tol.ApplicationTimeoutConfig; tc != nil {
		if v := tc.ForceTerminationGracePeriodMillis; v != nil && *v != defaultTimeoutMillis {
			errs = append(errs, field.Invalid(tp.Child("applicationTimeoutConfig", "forceTerminationGracePeriodMillis"), *v,
				"Metacontroller deletes a stopped attempt's driver with its Pod's own grace period: leave it unset"))
		}
	}
	if ic := tol.InstanceConfig; ic != nil {
		ip := tp.Child("instanceConfig")
		for _, f := range []struct {
			name string
			v    int64
		}{{"initExecutors", ic.InitExecutors}, {"minExecutors", ic.MinExecutors}, {"maxExecutors", ic.MaxExecutors}} {
			if f.v < 0 {
				errs = append(errs, field.Invalid(ip.Child(f.name), f.v, "must be >= 0"))
			}
		}
	}
	return errs
}

// corePaths name the fields of the core's application by the Apache fields they come from,
// longest first.
var corePaths = []struct{ core, apache string }{
	{"spec.driver.image", "spec.sparkConf[" + confDriverImage + "]"},
	{"spec.executor.image", "spec.sparkConf[" + confExecutorImage + "]"},
	{"spec.driver.serviceAccount", "spec.sparkConf[" + confDriverServiceAccount + "]"},
	{"spec.executor.serviceAccount", "spec.sparkConf[" + confExecutorServiceAccount + "]"},
	{"spec.driver.podName", "spec.sparkConf[" + confDriverPodName + "]"},
	{"spec.driver.template", "spec.driverSpec.podTemplateSpec"},
	{"spec.executor.template", "spec.executorSpec.podTemplateSpec"},
	{"spec.image", "spec.sparkConf[" + confImage + "]"},
	{"spec.arguments", "spec.driverArgs"},
	{"spec.sparkVersion", "spec.runtimeVersions.sparkVersion"},
	{"spec.mainApplicationFile", "spec.jars"},
	{"spec.deps.jars", "spec.jars"},
	{"spec.deps.pyFiles", "spec.pyFiles"},
	{"spec.deps.files", "spec.files"},
	{"spec.restartPolicy", "spec.applicationTolerations.restartConfig"},
	{"spec.timeouts", "spec.applicationTolerations.applicationTimeoutConfig"},
	{"spec.timeToLiveSeconds", "spec.applicationTolerations.ttlAfterStopMillis"},
}

func apachePath(p string) string {
	for _, m := range corePaths {
		if rest, ok := strings.CutPrefix(p, m.core); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return m.apache + rest
		}
	}
	return p
}

// apacheDetail rewords the core's advice that names its own fields.
func apacheDetail(d string) string {
	return strings.NewReplacer(
		"set spec.image", "set sparkConf "+confImage,
		"spec.driver.image", "sparkConf "+confDriverImage,
		"spec.executor.image", "sparkConf "+confExecutorImage,
	).Replace(d)
}
