package children

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// TestCurrentSparkDefaults pins what the builder does differently from Spark 4.1 on, so that
// the objects match what spark-submit of that version creates and nothing the builder sets
// contradicts the version's own defaults.
func TestCurrentSparkDefaults(t *testing.T) {
	withPolicies := Options{NetworkPolicies: true}
	driverSecurity := func(sc *corev1.SecurityContext) func(*v1beta2.SparkApplication) {
		return func(app *v1beta2.SparkApplication) { app.Spec.Driver.SecurityContext = sc }
	}
	executorSecurity := func(sc *corev1.SecurityContext) func(*v1beta2.SparkApplication) {
		return func(app *v1beta2.SparkApplication) { app.Spec.Executor.SecurityContext = sc }
	}
	tests := []struct {
		name string
		app  *v1beta2.SparkApplication
		opts Options
		// want: the annotateExitException property, whether a policy is built, the driver's
		// allowPrivilegeEscalation (nil: unset) and the executor property.
		annotate       string
		policy         bool
		driverEscalate *bool
		executorProp   string
	}{
		{name: "4.0 has none of them", app: newApp(withVersion("4.0.1")), opts: withPolicies},
		{name: "4.1 annotates the exit exception", app: newApp(withVersion("4.1.1")), opts: withPolicies, annotate: "true"},
		{name: "the user's annotateExitException stays", app: newApp(withVersion("4.1.1"), withConf("spark.kubernetes.driver.annotateExitException", "false")), opts: withPolicies, annotate: "false"},
		{name: "4.2 gets the executor NetworkPolicy", app: newApp(withVersion("4.2.0")), opts: withPolicies, annotate: "true", policy: true},
		{name: "4.2 without the registration's NetworkPolicies", app: newApp(withVersion("4.2.0")), annotate: "true"},
		{
			name:     "4.2 with the feature step excluded",
			app:      newApp(withVersion("4.2.0"), withConf("spark.kubernetes.driver.pod.excludedFeatureSteps", "org.example.Step, "+networkPolicyFeatureStep)),
			opts:     withPolicies,
			annotate: "true",
		},
		{name: "4.3 forbids privilege escalation", app: newApp(withVersion("4.3.0")), opts: withPolicies, annotate: "true", policy: true, driverEscalate: ptr.To(false)},
		{
			name: "4.3 driver property allows it",
			app: newApp(withVersion("4.3.0"), withConf("spark.kubernetes.securityContext.allowPrivilegeEscalation", "false",
				"spark.kubernetes.driver.securityContext.allowPrivilegeEscalation", "true")),
			annotate: "true", driverEscalate: ptr.To(true),
		},
		{
			name:     "4.3 keeps the rest of the user's security context",
			app:      newApp(withVersion("4.3.0"), driverSecurity(&corev1.SecurityContext{RunAsUser: ptr.To[int64](185)})),
			annotate: "true", driverEscalate: ptr.To(false),
		},
		{
			name:     "4.3 spec values decide, as the webhook applies them after Spark",
			app:      newApp(withVersion("4.3.0"), driverSecurity(&corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}), executorSecurity(&corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)})),
			annotate: "true", driverEscalate: ptr.To(true), executorProp: "true",
		},
		{
			name: "4.3 executor property set by the user wins over the spec",
			app: newApp(withVersion("4.3.0"), executorSecurity(&corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(true)}),
				withConf("spark.kubernetes.executor.securityContext.allowPrivilegeEscalation", "false")),
			annotate: "true", driverEscalate: ptr.To(false), executorProp: "false",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := build(t, tc.app, tc.opts)
			props := sparkProps(t, objs)
			assert.Equal(t, tc.annotate, props["spark.kubernetes.driver.annotateExitException"])
			assert.Equal(t, tc.executorProp, props["spark.kubernetes.executor.securityContext.allowPrivilegeEscalation"])
			// Spark's own defaults are left to Spark: the allocation batch size changed in 4.0
			// and 4.2, and executors use the driver's Pod IP by default from 4.3.
			assert.NotContains(t, props, "spark.kubernetes.allocation.batch.size")
			assert.NotContains(t, props, "spark.kubernetes.executor.useDriverPodIP")

			ctr := driverContainer(t, objs)
			if tc.driverEscalate == nil {
				assert.True(t, ctr.SecurityContext == nil || ctr.SecurityContext.AllowPrivilegeEscalation == nil)
			} else {
				require.NotNil(t, ctr.SecurityContext)
				assert.Equal(t, tc.driverEscalate, ctr.SecurityContext.AllowPrivilegeEscalation)
				if sc := tc.app.Spec.Driver.SecurityContext; sc != nil && sc.RunAsUser != nil {
					assert.Equal(t, sc.RunAsUser, ctr.SecurityContext.RunAsUser)
				}
			}

			if !tc.policy {
				assert.Nil(t, objs.NetworkPolicy)
				return
			}
			np := objs.NetworkPolicy
			require.NotNil(t, np)
			assert.Equal(t, "pi-policy", np.Name)
			assert.Equal(t, testNamespace, np.Namespace)
			assert.Equal(t, map[string]string{sparkpod.LabelSparkRole: sparkpod.RoleExecutor, sparkpod.LabelAppSelector: testSub.AppID}, np.Spec.PodSelector.MatchLabels)
			require.Len(t, np.Spec.Ingress, 1)
			require.Len(t, np.Spec.Ingress[0].From, 1)
			assert.Equal(t, map[string]string{sparkpod.LabelAppSelector: testSub.AppID}, np.Spec.Ingress[0].From[0].PodSelector.MatchLabels)
			assert.Contains(t, objs.List(), any(np), "the policy is a child")
		})
	}
}

// TestDefaultServiceAccount pins the precedence of the driver's service account: the spec, the
// driver template, then the operator default (Kubeflow's --default-service-account), which goes
// to spark.properties too so that executors take it, as Spark gives them the driver's account.
func TestDefaultServiceAccount(t *testing.T) {
	withDefault := Options{DefaultServiceAccount: "spark-default"}
	driverSA := func(sa string) func(*v1beta2.SparkApplication) {
		return func(app *v1beta2.SparkApplication) { app.Spec.Driver.ServiceAccount = ptr.To(sa) }
	}
	templateSA := func(sa string) func(*v1beta2.SparkApplication) {
		return func(app *v1beta2.SparkApplication) {
			app.Spec.Driver.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: sa}}
		}
	}
	for _, tc := range []struct {
		name            string
		app             *v1beta2.SparkApplication
		opts            Options
		wantPod         string
		wantPropertySet string
	}{
		{name: "none anywhere", app: newApp()},
		{name: "the operator default", app: newApp(), opts: withDefault, wantPod: "spark-default", wantPropertySet: "spark-default"},
		{name: "the spec wins", app: newApp(driverSA("etl"), templateSA("from-template")), opts: withDefault, wantPod: "etl", wantPropertySet: "etl"},
		{name: "the template wins over the default", app: newApp(templateSA("from-template")), opts: withDefault, wantPod: "from-template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := build(t, tc.app, tc.opts)
			assert.Equal(t, tc.wantPod, objs.DriverPod.Spec.ServiceAccountName)
			assert.Equal(t, tc.wantPropertySet, sparkProps(t, objs)["spark.kubernetes.authenticate.driver.serviceAccountName"])
		})
	}
}

// TestExcludedDriverServiceFeatureStep: from Spark 4.1 an application may leave out
// DriverServiceFeatureStep (Spark's "SPARK-53944: Run SparkPi without driver service", with
// spark.kubernetes.executor.useDriverPodIP): no headless Service, and no spark.driver.host
// naming one. Older Spark ignores the list, so the Service stays.
func TestExcludedDriverServiceFeatureStep(t *testing.T) {
	exclude := withConf("spark.kubernetes.driver.pod.excludedFeatureSteps", driverServiceFeatureStep,
		"spark.kubernetes.executor.useDriverPodIP", "true")
	for _, tc := range []struct {
		version string
		service bool
	}{
		{"4.0.1", true},
		{"4.1.1", false},
		{"4.3.0", false},
	} {
		t.Run(tc.version, func(t *testing.T) {
			objs := build(t, newApp(withVersion(tc.version), exclude), Options{})
			host, hasHost := sparkProps(t, objs)["spark.driver.host"]
			if tc.service {
				require.NotNil(t, objs.DriverService)
				assert.Equal(t, "pi-eb0f4b1c-driver-svc.team-a.svc", host)
				return
			}
			assert.Nil(t, objs.DriverService)
			assert.False(t, hasHost, "spark.driver.host %q names a Service that is not made", host)
			for _, obj := range objs.List() {
				assert.NotNil(t, obj)
			}
		})
	}
}
