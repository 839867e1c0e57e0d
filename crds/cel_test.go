package crds

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/crdschema"
)

// TestCELAgreesWithValidation holds the CRDs' CEL rules to the Go validation the hooks and the
// webhook run: every spec in the table that the schema refuses, the Go validation refuses too
// (the CRD must never refuse what sparkhooks would run), and each rule refuses the spec it was
// written for, at the field the Go validation names.
func TestCELAgreesWithValidation(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*v1beta2.SparkApplicationSpec)
		// wantField is where the schema refuses; empty means the schema accepts the spec.
		wantField string
		// goValid is the Go validation's verdict; it must be false whenever wantField is set.
		goValid bool
	}{
		{name: "valid", mutate: func(*v1beta2.SparkApplicationSpec) {}, goValid: true},
		{name: "spark.master in sparkConf", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.master": "k8s://https://example.com"}
		}, wantField: "spec.sparkConf"},
		{name: "a standalone cluster's master in sparkConf", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.master": "spark://prod-master-svc:7077"}
		}, goValid: true},
		{name: "a standalone master without a port", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.master": "spark://prod-master-svc"}
		}},
		{name: "an image in sparkConf", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.kubernetes.executor.container.image": "spark:4"}
		}, wantField: "spec.sparkConf"},
		{name: "an OAuth token file in sparkConf", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.kubernetes.authenticate.driver.oauthTokenFile": "/t"}
		}, wantField: "spec.sparkConf"},
		{name: "a service account in sparkConf", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.kubernetes.authenticate.executor.serviceAccountName": "x"}
		}, wantField: "spec.sparkConf"},
		{name: "ordinary sparkConf", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.sql.shuffle.partitions": "64", "spark.kubernetes.namespace": "spark-jobs"}
		}, goValid: true},
		{name: "sparkConf the Go validation alone refuses", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.SparkConf = map[string]string{"spark.executor.memory": "lots"}
		}},
		{name: "nodeSelector with the driver's", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.NodeSelector = map[string]string{"pool": "spark"}
			s.Driver.NodeSelector = map[string]string{"zone": "a"}
		}, wantField: "spec"},
		{name: "nodeSelector with the executor's", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.NodeSelector = map[string]string{"pool": "spark"}
			s.Executor.NodeSelector = map[string]string{"zone": "a"}
		}, wantField: "spec"},
		{name: "nodeSelector alone", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.NodeSelector = map[string]string{"pool": "spark"}
		}, goValid: true},
		{name: "per-role node selectors", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.Driver.NodeSelector = map[string]string{"zone": "a"}
			s.Executor.NodeSelector = map[string]string{"zone": "b"}
		}, goValid: true},
		{name: "minExecutors above maxExecutors", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.Executor.Instances = nil
			s.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](5), MaxExecutors: ptr.To[int32](2)}
		}, wantField: "spec.dynamicAllocation.minExecutors"},
		{name: "initialExecutors above maxExecutors", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.Executor.Instances = nil
			s.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](5), MaxExecutors: ptr.To[int32](2)}
		}, wantField: "spec.dynamicAllocation.initialExecutors"},
		{name: "bounds in order", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.Executor.Instances = nil
			s.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](1), InitialExecutors: ptr.To[int32](2), MaxExecutors: ptr.To[int32](2)}
		}, goValid: true},
		{name: "bounds out of order while disabled", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.DynamicAllocation = &v1beta2.DynamicAllocation{MinExecutors: ptr.To[int32](5), MaxExecutors: ptr.To[int32](2)}
		}, goValid: true},
		{name: "driver ingress without a URL", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{ServicePort: ptr.To[int32](7077), ServicePortName: ptr.To("connect")}}
		}, wantField: "spec.driverIngressOptions[0].ingressURLFormat"},
		{name: "driver ingress with a URL", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{ServicePort: ptr.To[int32](7077), ServicePortName: ptr.To("connect"), IngressURLFormat: "{{$appName}}.example.com"}}
		}, goValid: true},
		{name: "driver port with a GRPCRoute and no Ingress", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{ServicePort: ptr.To[int32](15002), ServicePortName: ptr.To("spark-connect"),
				GRPCRoute: &v1beta2.GRPCRouteConfiguration{Hostnames: []string{"{{$appName}}.connect.example.com"}}}}
		}, goValid: true},
		{name: "driver port with an HTTPRoute and no Ingress", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{{ServicePort: ptr.To[int32](8080), ServicePortName: ptr.To("http"),
				HTTPRoute: &v1beta2.HTTPRouteConfiguration{}}}
		}, goValid: true},
		{name: "managed by sparkhooks, written out", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.ManagedBy = ptr.To(v1beta2.ManagedBySparkOperator)
		}, goValid: true},
		{name: "managed by MultiKueue", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.ManagedBy = ptr.To(v1beta2.ManagedByMultiKueue)
		}, goValid: true},
		{name: "managed by another controller", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.ManagedBy = ptr.To("example.com/my-controller")
		}, wantField: "spec.managedBy"},
		{name: "managed by nobody", mutate: func(s *v1beta2.SparkApplicationSpec) {
			s.ManagedBy = ptr.To("")
		}, wantField: "spec.managedBy"},
	}
	apps, err := crdschema.Load(sparkApplicationFile)
	require.NoError(t, err)
	scheduled, err := crdschema.Load(scheduledSparkApplicationFile)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := celBase()
			tt.mutate(&app.Spec)

			defaulted := app.DeepCopy()
			v1beta2.SetSparkApplicationDefaults(defaulted)
			goErrs := v1beta2.ValidateSparkApplication(defaulted)
			assert.Equal(t, tt.goValid, len(goErrs) == 0, "Go validation: %v", goErrs)

			schemaErrs, err := apps.ValidateObject(app)
			require.NoError(t, err)
			checkSchemaVerdict(t, schemaErrs, tt.wantField, goErrs)

			// The rules hold in a ScheduledSparkApplication's template too.
			ssa := &v1beta2.ScheduledSparkApplication{
				TypeMeta:   metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindScheduledSparkApplication},
				ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "spark-jobs"},
				Spec:       v1beta2.ScheduledSparkApplicationSpec{Schedule: "0 3 * * *", Template: app.Spec},
			}
			schemaErrs, err = scheduled.ValidateObject(ssa)
			require.NoError(t, err)
			wantField := tt.wantField
			if wantField != "" {
				wantField = "spec.template" + wantField[len("spec"):]
			}
			checkSchemaVerdict(t, schemaErrs, wantField, goErrs)
		})
	}
}

func checkSchemaVerdict(t *testing.T, schemaErrs field.ErrorList, wantField string, goErrs field.ErrorList) {
	t.Helper()
	if wantField == "" {
		assert.Empty(t, schemaErrs)
		return
	}
	require.Len(t, schemaErrs, 1, "%v", schemaErrs)
	assert.Equal(t, wantField, schemaErrs[0].Field)
	assert.NotEmpty(t, goErrs, "the schema refuses what the Go validation accepts: %v", schemaErrs)
}

func celBase() *v1beta2.SparkApplication {
	return &v1beta2.SparkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindSparkApplication},
		ObjectMeta: metav1.ObjectMeta{Name: "spark-pi", Namespace: "spark-jobs"},
		Spec: v1beta2.SparkApplicationSpec{
			Type:                v1beta2.SparkApplicationTypeScala,
			SparkVersion:        "3.5.3",
			Image:               ptr.To("apache/spark:3.5.3"),
			MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: ptr.To("local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar"),
			Driver:              v1beta2.DriverSpec{SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")}},
			Executor:            v1beta2.ExecutorSpec{Instances: ptr.To[int32](2), SparkPodSpec: v1beta2.SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("512m")}},
		},
	}
}

// TestCELWithinCostBudget checks that the API server's CRD validation, which estimates the cost
// of every CEL rule against its per-rule and per-CRD budgets, accepts both CRDs, and that it
// would notice a rule over budget: a rule comparing every pair of sparkConf keys, whose map has
// no size limit.
func TestCELWithinCostBudget(t *testing.T) {
	for _, file := range []string{sparkApplicationFile, scheduledSparkApplicationFile} {
		crd := loadCRD(t, file)
		assert.Empty(t, crdschema.ValidateCRD(crd), file)
	}
	crd := loadCRD(t, sparkApplicationFile)
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.XValidations = append(spec.XValidations, apiextensionsv1.ValidationRule{
		Rule: "!has(self.sparkConf) || self.sparkConf.all(a, self.sparkConf.all(b, a == b || a != b))",
	})
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	errs := crdschema.ValidateCRD(crd)
	require.NotEmpty(t, errs)
	assert.Contains(t, errs.ToAggregate().Error(), "cost")
}

// TestManagedByImmutable holds the CRD's transition rule on spec.managedBy to the webhook's
// check (ValidateSparkApplicationUpdate): the manager an application was created with stays,
// whether written out or left to the default, and nothing else in the spec is held by it.
func TestManagedByImmutable(t *testing.T) {
	multi, ours, other := ptr.To(v1beta2.ManagedByMultiKueue), ptr.To(v1beta2.ManagedBySparkOperator), ptr.To("example.com/x")
	tests := []struct {
		name       string
		old, new   *string
		wantRefuse bool
	}{
		{name: "unset stays unset"},
		{name: "MultiKueue stays", old: multi, new: multi},
		{name: "the default written out", new: ours},
		{name: "the default removed", old: ours},
		{name: "handed to MultiKueue", new: multi, wantRefuse: true},
		{name: "handed from sparkhooks to MultiKueue", old: ours, new: multi, wantRefuse: true},
		{name: "taken back from MultiKueue", old: multi, wantRefuse: true},
		{name: "taken back explicitly", old: multi, new: ours, wantRefuse: true},
		// A value stored without the rules in place may still not change; the allowlist refuses
		// the new value on its own.
		{name: "from an unknown value", old: other, new: multi, wantRefuse: true},
	}
	apps, err := crdschema.Load(sparkApplicationFile)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, app := celBase(), celBase()
			old.Spec.ManagedBy, app.Spec.ManagedBy = tt.old, tt.new
			app.Spec.Arguments = []string{"100"} // an ordinary edit alongside

			goErrs := v1beta2.ValidateSparkApplicationUpdate(old, app)
			assert.Equal(t, tt.wantRefuse, len(goErrs) > 0, "Go validation: %v", goErrs)

			schemaErrs := apps.ValidateUpdate(toMap(t, app), toMap(t, old))
			if !tt.wantRefuse {
				assert.Empty(t, schemaErrs)
				return
			}
			require.NotEmpty(t, schemaErrs)
			assert.Equal(t, "spec.managedBy", schemaErrs[len(schemaErrs)-1].Field)
			assert.Contains(t, schemaErrs.ToAggregate().Error(), "immutable")
		})
	}
	// Without an old object (a create) the transition rule does not run.
	app := celBase()
	app.Spec.ManagedBy = multi
	assert.Empty(t, apps.Validate(toMap(t, app)))
}

func toMap(t *testing.T, obj any) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}
