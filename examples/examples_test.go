package examples

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/schedule"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/crdschema"
)

const (
	sparkApplicationCRD          = "../crds/sparkoperator.k8s.io_sparkapplications.yaml"
	scheduledSparkApplicationCRD = "../crds/sparkoperator.k8s.io_scheduledsparkapplications.yaml"
	sparkConnectCRD              = "../crds/sparkoperator.k8s.io_sparkconnects.yaml"
	sparkClusterCRD              = "../crds/spark.apache.org_sparkclusters.yaml"
	chartValues                  = "../chart/values.yaml"
	readme                       = "../README.md"

	minSparkApplications          = 12
	minScheduledSparkApplications = 2
)

// TestExamplesAreValid runs every check on every example: what the API server does on
// kubectl apply, strict decoding into the Go type (which catches what the schema leaves open,
// such as pod templates) and the hooks' own validation after defaulting.
func TestExamplesAreValid(t *testing.T) {
	c := newChecker(t)
	serviceAccount := chartServiceAccount(t)
	files := exampleFiles(t)
	require.NotEmpty(t, files)

	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(data), "# "), "an example starts with a comment saying what it shows")

			f := c.check(t, data)
			assert.NoError(t, f.schema.ToAggregate(), "the API server would refuse it")
			require.NoError(t, f.decode, "strict decoding into the Go type")
			assert.NoError(t, f.validate.ToAggregate(), "sparkhooks would refuse to run it")

			// The name matches the file so that users can guess the driver Pod's name, and
			// there is no namespace so that users apply the example into their own.
			assert.Equal(t, strings.TrimSuffix(file, ".yaml"), f.name(), "metadata.name")
			assert.Empty(t, f.namespace(), "metadata.namespace")
			// Drivers need the ServiceAccount the chart creates in job namespaces, whose Role lets
			// them create their executors.
			if f.cluster != nil {
				return // a standalone cluster has no driver; its Pods need no API access
			}
			sa := f.serviceAccount()
			require.NotNil(t, sa, "spec.driver.serviceAccount (a SparkConnect's: its server template's)")
			assert.Equal(t, serviceAccount, *sa, "the driver's service account")
		})
	}
}

// TestExamplesCoverTheAPI fails when an example that shows a feature is deleted or stops
// showing it.
func TestExamplesCoverTheAPI(t *testing.T) {
	c := newChecker(t)
	var apps []*v1beta2.SparkApplication
	var scheduled []*v1beta2.ScheduledSparkApplication
	for _, file := range exampleFiles(t) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		f := c.check(t, data)
		require.NoError(t, f.decode, file)
		switch {
		case f.app != nil:
			apps = append(apps, f.app)
		case f.scheduled != nil:
			scheduled = append(scheduled, f.scheduled)
		}
	}
	assert.GreaterOrEqual(t, len(apps), minSparkApplications, "SparkApplication examples")
	assert.GreaterOrEqual(t, len(scheduled), minScheduledSparkApplications, "ScheduledSparkApplication examples")

	appFeatures := []struct {
		feature string
		shows   func(*v1beta2.SparkApplicationSpec) bool
	}{
		{"a Scala application", func(s *v1beta2.SparkApplicationSpec) bool { return s.Type == v1beta2.SparkApplicationTypeScala }},
		{"a Java application on Spark 4", func(s *v1beta2.SparkApplicationSpec) bool {
			return s.Type == v1beta2.SparkApplicationTypeJava && sparkMajor(s) == "4"
		}},
		{"a Python application on Spark 3 that runs from the image", func(s *v1beta2.SparkApplicationSpec) bool {
			return s.Type == v1beta2.SparkApplicationTypePython && sparkMajor(s) == "3" && ptrEquals(s.PythonVersion, "3") &&
				s.MainApplicationFile != nil && strings.HasPrefix(*s.MainApplicationFile, "local://")
		}},
		{"a Python application on Spark 4", func(s *v1beta2.SparkApplicationSpec) bool {
			return s.Type == v1beta2.SparkApplicationTypePython && sparkMajor(s) == "4"
		}},
		{"an R application", func(s *v1beta2.SparkApplicationSpec) bool { return s.Type == v1beta2.SparkApplicationTypeR }},
		{"a Spark 4 image", func(s *v1beta2.SparkApplicationSpec) bool {
			return s.Image != nil && strings.HasPrefix(*s.Image, "apache/spark:4.")
		}},
		{"Spark 2.4", func(s *v1beta2.SparkApplicationSpec) bool { return strings.HasPrefix(s.SparkVersion, "2.4.") }},
		{"dynamic allocation with every bound and shuffle tracking", func(s *v1beta2.SparkApplicationSpec) bool {
			da := s.DynamicAllocation
			return da != nil && da.Enabled && da.InitialExecutors != nil && da.MinExecutors != nil && da.MaxExecutors != nil &&
				da.ShuffleTrackingTimeout != nil
		}},
		{"Prometheus metrics of the driver and executors", func(s *v1beta2.SparkApplicationSpec) bool {
			m := s.Monitoring
			return m != nil && m.ExposeDriverMetrics && m.ExposeExecutorMetrics && m.Prometheus != nil && m.Prometheus.JmxExporterJar != ""
		}},
		{"a UI Ingress with annotations and TLS", func(s *v1beta2.SparkApplicationSpec) bool {
			ui := s.SparkUIOptions
			return ui != nil && len(ui.IngressAnnotations) > 0 && len(ui.IngressTLS) > 0
		}},
		{"driverIngressOptions", func(s *v1beta2.SparkApplicationSpec) bool { return len(s.DriverIngressOptions) > 0 }},
		{"a UI HTTPRoute on a Gateway", func(s *v1beta2.SparkApplicationSpec) bool {
			return s.SparkUIOptions != nil && s.SparkUIOptions.HTTPRoute != nil && len(s.SparkUIOptions.HTTPRoute.ParentRefs) > 0
		}},
		{"restartPolicy OnFailure with retries and intervals", func(s *v1beta2.SparkApplicationSpec) bool {
			rp := s.RestartPolicy
			return rp.Type == v1beta2.RestartPolicyOnFailure && rp.OnFailureRetries != nil && rp.OnFailureRetryInterval != nil &&
				rp.OnSubmissionFailureRetries != nil && rp.OnSubmissionFailureRetryInterval != nil
		}},
		{"a PersistentVolumeClaim or hostPath volume", func(s *v1beta2.SparkApplicationSpec) bool {
			return slices.ContainsFunc(s.Volumes, func(v corev1.Volume) bool { return v.PersistentVolumeClaim != nil || v.HostPath != nil })
		}},
		{"an emptyDir spark-local-dir-* volume", func(s *v1beta2.SparkApplicationSpec) bool {
			return slices.ContainsFunc(s.Volumes, func(v corev1.Volume) bool {
				return strings.HasPrefix(v.Name, "spark-local-dir-") && v.EmptyDir != nil
			})
		}},
		{"secrets of every type", func(s *v1beta2.SparkApplicationSpec) bool {
			types := map[v1beta2.SecretType]bool{}
			for _, role := range roles(s) {
				for _, secret := range role.Secrets {
					types[secret.Type] = true
				}
			}
			return types[v1beta2.SecretTypeGeneric] && types[v1beta2.SecretTypeGCPServiceAccount] && types[v1beta2.SecretTypeHadoopDelegationToken]
		}},
		{"configMaps, envSecretKeyRefs and envFrom", func(s *v1beta2.SparkApplicationSpec) bool {
			return slices.ContainsFunc(roles(s), func(r *v1beta2.SparkPodSpec) bool {
				return len(r.ConfigMaps) > 0 && len(r.EnvSecretKeyRefs) > 0 && len(r.EnvFrom) > 0
			})
		}},
		{"tolerations, affinity and a nodeSelector", func(s *v1beta2.SparkApplicationSpec) bool {
			var tolerations, affinity, nodeSelector bool
			for _, r := range roles(s) {
				tolerations = tolerations || len(r.Tolerations) > 0
				affinity = affinity || r.Affinity != nil
				nodeSelector = nodeSelector || len(r.NodeSelector) > 0
			}
			return tolerations && affinity && nodeSelector
		}},
		{"driver and executor pod templates", func(s *v1beta2.SparkApplicationSpec) bool {
			return s.Driver.Template != nil && s.Executor.Template != nil
		}},
		{"sparkConf, hadoopConf and deps", func(s *v1beta2.SparkApplicationSpec) bool {
			return len(s.SparkConf) > 0 && len(s.HadoopConf) > 0 &&
				len(s.Deps.Jars) > 0 && len(s.Deps.Packages) > 0 && len(s.Deps.Files) > 0
		}},
		{"timeouts, resourceRetainPolicy and timeToLiveSeconds", func(s *v1beta2.SparkApplicationSpec) bool {
			t := s.Timeouts
			return t != nil && t.DriverStartSeconds != nil && t.DriverReadySeconds != nil && t.ExecutorsStartSeconds != nil &&
				s.ResourceRetainPolicy != nil && s.TimeToLiveSeconds != nil
		}},
	}
	for _, tt := range appFeatures {
		t.Run(tt.feature, func(t *testing.T) {
			assert.True(t, slices.ContainsFunc(apps, func(app *v1beta2.SparkApplication) bool { return tt.shows(&app.Spec) }),
				"no SparkApplication example shows %s", tt.feature)
		})
	}

	scheduledFeatures := []struct {
		feature string
		shows   func(*v1beta2.ScheduledSparkApplicationSpec) bool
	}{
		{"a timeZone with concurrencyPolicy Forbid and history limits", func(s *v1beta2.ScheduledSparkApplicationSpec) bool {
			return s.TimeZone != "" && s.ConcurrencyPolicy == v1beta2.ConcurrencyForbid &&
				s.SuccessfulRunHistoryLimit != nil && s.FailedRunHistoryLimit != nil
		}},
		{"a CRON_TZ= schedule with concurrencyPolicy Replace and suspend false", func(s *v1beta2.ScheduledSparkApplicationSpec) bool {
			return strings.HasPrefix(s.Schedule, "CRON_TZ=") && s.ConcurrencyPolicy == v1beta2.ConcurrencyReplace &&
				s.Suspend != nil && !*s.Suspend
		}},
		{"an @every schedule", func(s *v1beta2.ScheduledSparkApplicationSpec) bool { return strings.HasPrefix(s.Schedule, "@every ") }},
	}
	for _, tt := range scheduledFeatures {
		t.Run(tt.feature, func(t *testing.T) {
			assert.True(t, slices.ContainsFunc(scheduled, func(ssa *v1beta2.ScheduledSparkApplication) bool { return tt.shows(&ssa.Spec) }),
				"no ScheduledSparkApplication example shows %s", tt.feature)
		})
	}
}

// TestSparkPiMatchesReadme pins the example the README runs, and whose output it quotes.
func TestSparkPiMatchesReadme(t *testing.T) {
	data, err := os.ReadFile("spark-pi.yaml")
	require.NoError(t, err)
	f := newChecker(t).check(t, data)
	require.NoError(t, f.decode)
	require.NotNil(t, f.app, "spark-pi.yaml holds a SparkApplication")
	app := f.app

	assert.Equal(t, "spark-pi", app.Name, "the README reads the logs of spark-pi-driver")
	assert.Empty(t, app.Namespace, "the README applies it into the current namespace")
	assert.Equal(t, v1beta2.SparkApplicationTypeScala, app.Spec.Type)
	assert.Equal(t, ptr.To("apache/spark:3.5.3"), app.Spec.Image)
	assert.Equal(t, ptr.To("org.apache.spark.examples.SparkPi"), app.Spec.MainClass)
	assert.Equal(t, ptr.To("local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar"), app.Spec.MainApplicationFile)
	assert.Equal(t, []string{"1000"}, app.Spec.Arguments)
	assert.Equal(t, ptr.To(chartServiceAccount(t)), app.Spec.Driver.ServiceAccount)
	assert.Equal(t, ptr.To[int32](2), app.Spec.Executor.Instances)
	assert.Nil(t, app.Spec.Driver.PodName, "the driver Pod must keep its default name, spark-pi-driver")

	text, err := os.ReadFile(readme)
	require.NoError(t, err)
	assert.Contains(t, string(text), "kubectl apply -f examples/spark-pi.yaml")
	assert.Contains(t, string(text), "kubectl logs spark-pi-driver")
}

// TestBrokenExamplesAreRejected shows that the checks of TestExamplesAreValid catch mistakes,
// each at the layer that can see it. An empty want means that layer finds nothing.
func TestBrokenExamplesAreRejected(t *testing.T) {
	tests := []struct {
		file                       string
		schema, decode, validation string
	}{
		{
			file:       "broken-type.yaml",
			schema:     `spec.type: Unsupported value: "Cobol": supported values: "Java", "Python", "Scala", "R"`,
			validation: `spec.type: Unsupported value: "Cobol"`,
		},
		{
			file:   "broken-instances.yaml",
			schema: `spec.executor.instances: Invalid value: "string": spec.executor.instances in body must be of type integer: "string"`,
			decode: `spec.executor.instances of type int32`,
		},
		{
			file:   "broken-unknown-field.yaml",
			schema: `spec.driver.memroy: Forbidden: field not declared in the schema`,
			decode: `unknown field "memroy"`,
		},
		{
			file:       "broken-memory-limit.yaml",
			validation: `spec.executor.memoryLimit: Invalid value: "2Gi": is below executor.memory (4g)`,
		},
		{
			file:       "broken-schedule.yaml",
			validation: `spec.schedule: Invalid value: "61 * * * *"`,
		},
	}
	c := newChecker(t)
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			require.NoError(t, err)
			f := c.check(t, data)

			assertFinds(t, "the schema", tt.schema, f.schema.ToAggregate())
			assertFinds(t, "strict decoding", tt.decode, f.decode)
			assertFinds(t, "validation", tt.validation, f.validate.ToAggregate())
			// One mistake per file, so that each case proves its check alone catches it.
			assert.LessOrEqual(t, len(crdschema.WithoutCELSkipped(f.schema)), 1, "schema errors: %v", f.schema)
			assert.LessOrEqual(t, len(f.validate), 1, "validation errors: %v", f.validate)
		})
	}
}

func assertFinds(t *testing.T, layer, want string, err error) {
	t.Helper()
	if want == "" {
		assert.NoError(t, err, "%s should find nothing", layer)
		return
	}
	if assert.Error(t, err, "%s should find %q", layer, want) {
		assert.Contains(t, err.Error(), want, layer)
	}
}

// checker runs the checks an example must pass.
type checker struct {
	// validators maps a kind to the API server's validation of its CRD.
	validators map[string]*crdschema.Validator
	// now is when schedules are checked from; fixed, so that the verdict does not depend on
	// the day the test runs.
	now time.Time
}

func newChecker(t *testing.T) *checker {
	t.Helper()
	c := &checker{validators: map[string]*crdschema.Validator{}, now: time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)}
	for _, file := range []string{sparkApplicationCRD, scheduledSparkApplicationCRD, sparkConnectCRD, sparkClusterCRD} {
		v, err := crdschema.Load(file)
		require.NoError(t, err)
		c.validators[v.CRD().Spec.Names.Kind] = v
	}
	return c
}

// findings are what each check found in one manifest. Exactly one of app, scheduled and
// connect is set when decode is nil.
type findings struct {
	schema    field.ErrorList
	decode    error
	validate  field.ErrorList
	app       *v1beta2.SparkApplication
	scheduled *v1beta2.ScheduledSparkApplication
	connect   *v1alpha1.SparkConnect
	cluster   *sparkv1.SparkCluster
}

func (c *checker) check(t *testing.T, data []byte) findings {
	t.Helper()
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(data, &obj), "not a YAML object")
	kind, _ := obj["kind"].(string)
	validator, ok := c.validators[kind]
	require.True(t, ok, "kind %q is not one of this repository's CRDs", kind)

	f := findings{schema: validator.Validate(obj)}
	switch kind {
	case v1beta2.KindSparkApplication:
		var app v1beta2.SparkApplication
		if f.decode = yaml.UnmarshalStrict(data, &app); f.decode != nil {
			return f
		}
		f.app = app.DeepCopy()
		// The hooks validate the defaulted object; the stored one keeps what the user wrote.
		v1beta2.SetSparkApplicationDefaults(&app)
		f.validate = v1beta2.ValidateSparkApplication(&app)
	case v1beta2.KindScheduledSparkApplication:
		var ssa v1beta2.ScheduledSparkApplication
		if f.decode = yaml.UnmarshalStrict(data, &ssa); f.decode != nil {
			return f
		}
		f.scheduled = ssa.DeepCopy()
		// What the sync hook and the admission webhook check, the schedule included.
		f.validate = schedule.Validate(&ssa, c.now)
	case v1alpha1.KindSparkConnect:
		var sc v1alpha1.SparkConnect
		if f.decode = yaml.UnmarshalStrict(data, &sc); f.decode != nil {
			return f
		}
		f.connect = sc.DeepCopy()
		f.validate = v1alpha1.ValidateSparkConnect(&sc)
	case sparkv1.KindSparkCluster:
		var c sparkv1.SparkCluster
		if f.decode = yaml.UnmarshalStrict(data, &c); f.decode != nil {
			return f
		}
		f.cluster = c.DeepCopy()
		f.validate = sparkv1.ValidateSparkCluster(&c)
	}
	return f
}

func (f *findings) meta() metav1.ObjectMeta {
	switch {
	case f.app != nil:
		return f.app.ObjectMeta
	case f.connect != nil:
		return f.connect.ObjectMeta
	case f.cluster != nil:
		return f.cluster.ObjectMeta
	}
	return f.scheduled.ObjectMeta
}

func (f *findings) name() string { return f.meta().Name }

func (f *findings) namespace() string { return f.meta().Namespace }

// spec is the SparkApplication's spec, the template of the ScheduledSparkApplication, or the
// SparkApplication a SparkConnect's server is built as.
func (f *findings) spec() *v1beta2.SparkApplicationSpec {
	switch {
	case f.app != nil:
		return &f.app.Spec
	case f.connect != nil:
		return &v1alpha1.ServerApplication(f.connect).Spec
	}
	return &f.scheduled.Spec.Template
}

// serviceAccount is the driver's (or server's) ServiceAccount.
func (f *findings) serviceAccount() *string {
	if f.connect != nil {
		if t := f.connect.Spec.Server.Template; t != nil && t.Spec.ServiceAccountName != "" {
			return &t.Spec.ServiceAccountName
		}
		return nil
	}
	return f.spec().Driver.ServiceAccount
}

func exampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	require.NoError(t, err)
	return files
}

// chartServiceAccount is the ServiceAccount the chart creates for drivers in job namespaces.
func chartServiceAccount(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(chartValues)
	require.NoError(t, err)
	var values struct {
		Spark struct {
			ServiceAccount struct {
				Name string `json:"name"`
			} `json:"serviceAccount"`
		} `json:"spark"`
	}
	require.NoError(t, yaml.Unmarshal(data, &values))
	require.NotEmpty(t, values.Spark.ServiceAccount.Name, "spark.serviceAccount.name in %s", chartValues)
	return values.Spark.ServiceAccount.Name
}

func roles(s *v1beta2.SparkApplicationSpec) []*v1beta2.SparkPodSpec {
	return []*v1beta2.SparkPodSpec{&s.Driver.SparkPodSpec, &s.Executor.SparkPodSpec}
}

func sparkMajor(s *v1beta2.SparkApplicationSpec) string {
	major, _, _ := strings.Cut(s.SparkVersion, ".")
	return major
}

func ptrEquals(p *string, want string) bool { return p != nil && *p == want }

// TestApacheExamplesAreValid checks the Apache operator's SparkApplications in apache/ as
// TestExamplesAreValid checks the others: the API server's validation against their CRD,
// strict decoding and the hooks' validation.
func TestApacheExamplesAreValid(t *testing.T) {
	crd, err := crdschema.Load("../crds/spark.apache.org_sparkapplications.yaml")
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join("apache", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(string(data), "# "), "an example starts with a comment saying what it shows")
			var obj map[string]any
			require.NoError(t, yaml.Unmarshal(data, &obj))
			assert.Empty(t, crd.Validate(obj), "the API server would refuse it")
			var app sparkv1.SparkApplication
			require.NoError(t, yaml.UnmarshalStrict(data, &app), "strict decoding into the Go type")
			assert.NoError(t, sparkv1.ValidateSparkApplication(&app).ToAggregate(), "sparkhooks would refuse to run it")
			assert.Equal(t, strings.TrimSuffix(filepath.Base(file), ".yaml"), app.Name, "metadata.name")
			assert.Empty(t, app.Namespace, "metadata.namespace")
		})
	}
}
