package v1beta2

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// validApp is a Scala SparkPi as users write it, touching most validated fields.
func validApp() *SparkApplication {
	return &SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "spark-pi", Namespace: "spark-jobs"},
		Spec: SparkApplicationSpec{
			Type:                SparkApplicationTypeScala,
			SparkVersion:        "3.5.5",
			Mode:                DeployModeCluster,
			Image:               ptr.To("spark:3.5.5"),
			ImagePullPolicy:     ptr.To("IfNotPresent"),
			MainClass:           ptr.To("org.apache.spark.examples.SparkPi"),
			MainApplicationFile: ptr.To("local:///opt/spark/examples/jars/spark-examples.jar"),
			Arguments:           []string{"1000"},
			SparkConf:           map[string]string{"spark.kubernetes.namespace": "spark-jobs", "spark.executor.memoryOverhead": "512m"},
			Volumes:             []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Deps:                Dependencies{Packages: []string{"org.apache.hadoop:hadoop-aws:3.3.4"}},
			RestartPolicy:       RestartPolicy{Type: RestartPolicyOnFailure, OnFailureRetries: ptr.To[int32](3)},
			Driver: DriverSpec{
				SparkPodSpec: SparkPodSpec{
					Cores:          ptr.To[int32](1),
					CoreLimit:      ptr.To("1200m"),
					Memory:         ptr.To("512m"),
					MemoryLimit:    ptr.To("1g"),
					ServiceAccount: ptr.To("spark"),
					Labels:         map[string]string{"version": "3.5.5"},
					VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
					Secrets:        []SecretInfo{{Name: "gcp-key", Path: "/mnt/secrets", Type: SecretTypeGCPServiceAccount}},
				},
				CoreRequest: ptr.To("500m"),
				Ports:       []Port{{Name: "debug", Protocol: "TCP", ContainerPort: 5005}},
			},
			Executor: ExecutorSpec{
				SparkPodSpec: SparkPodSpec{Cores: ptr.To[int32](2), Memory: ptr.To("2g")},
				Instances:    ptr.To[int32](2),
			},
			SparkUIOptions:       &SparkUIConfiguration{ServicePort: ptr.To[int32](4040)},
			Timeouts:             &SparkApplicationTimeouts{DriverStartSeconds: ptr.To[int64](300)},
			ResourceRetainPolicy: ptr.To(ResourceRetainPolicyOnFailure),
			TimeToLiveSeconds:    ptr.To[int64](3600),
		},
	}
}

func TestValidateSparkApplicationAcceptsValid(t *testing.T) {
	app := validApp()
	assert.Empty(t, ValidateSparkApplication(app), "as written")
	SetSparkApplicationDefaults(app)
	assert.Empty(t, ValidateSparkApplication(app), "after defaulting")

	minimal := &SparkApplication{
		ObjectMeta: metav1.ObjectMeta{Name: "pyspark-pi"},
		Spec: SparkApplicationSpec{
			Type: SparkApplicationTypePython, SparkVersion: "4.0.1", Image: ptr.To("spark:4.0.1-python3"),
			MainApplicationFile: ptr.To("local:///opt/spark/examples/src/main/python/pi.py"),
		},
	}
	assert.Empty(t, ValidateSparkApplication(minimal), "minimal as written")
	SetSparkApplicationDefaults(minimal)
	assert.Empty(t, ValidateSparkApplication(minimal), "minimal after defaulting")
}

// wantErr is one expected error: its type, its field path and a part of its detail.
type wantErr struct {
	typ    field.ErrorType
	path   string
	detail string
}

func TestValidateSparkApplication(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*SparkApplication)
		want   []wantErr
	}{
		// Names.
		{"name with a dot", func(a *SparkApplication) { a.Name = "spark.pi" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.name", "DNS-1035 label"}}},
		{"name starting with a digit", func(a *SparkApplication) { a.Name = "1pi" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.name", "used as a label value"}}},
		{"name longer than a label value", func(a *SparkApplication) { a.Name = strings.Repeat("a", 64) },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.name", "must be no more than 63 characters"}}},
		{"name of 63 characters", func(a *SparkApplication) { a.Name = strings.Repeat("a", 63) }, nil},
		{"generateName object without a name yet", func(a *SparkApplication) { a.Name = "" }, nil},
		{"driver pod name not a subdomain", func(a *SparkApplication) { a.Spec.Driver.PodName = ptr.To("Driver_Pod") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.podName", "RFC 1123 subdomain"}}},
		{"driver pod name from sparkConf not a subdomain", func(a *SparkApplication) {
			a.Spec.SparkConf["spark.kubernetes.driver.pod.name"] = "Bad Name"
		}, []wantErr{{field.ErrorTypeInvalid, "spec.sparkConf[spark.kubernetes.driver.pod.name]", "RFC 1123 subdomain"}}},

		// Required fields.
		{"type missing", func(a *SparkApplication) { a.Spec.Type = "" },
			[]wantErr{{field.ErrorTypeRequired, "spec.type", "Java, Scala, Python or R"}}},
		{"type unknown", func(a *SparkApplication) { a.Spec.Type = "Go" },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.type", `"Java"`}}},
		{"sparkVersion missing", func(a *SparkApplication) { a.Spec.SparkVersion = "" },
			[]wantErr{{field.ErrorTypeRequired, "spec.sparkVersion", "for example 3.5.5"}}},
		{"sparkVersion not a version", func(a *SparkApplication) { a.Spec.SparkVersion = "latest" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.sparkVersion", "Spark version number"}}},
		{"sparkVersion with a suffix", func(a *SparkApplication) { a.Spec.SparkVersion = "4.1.0-preview1" }, nil},
		{"mainApplicationFile missing for Python", func(a *SparkApplication) {
			a.Spec.Type = SparkApplicationTypePython
			a.Spec.MainApplicationFile = nil
		}, []wantErr{{field.ErrorTypeRequired, "spec.mainApplicationFile", "Python or R file"}}},
		{"mainApplicationFile missing for Scala without mainClass", func(a *SparkApplication) {
			a.Spec.MainApplicationFile = ptr.To("")
			a.Spec.MainClass = nil
		}, []wantErr{{field.ErrorTypeRequired, "spec.mainApplicationFile", "spec.mainClass"}}},
		{"mainApplicationFile omitted for Java with mainClass in the image", func(a *SparkApplication) {
			a.Spec.Type = SparkApplicationTypeJava
			a.Spec.MainApplicationFile = nil
		}, nil},
		{"no image anywhere", func(a *SparkApplication) { a.Spec.Image = nil }, []wantErr{
			{field.ErrorTypeRequired, "spec.driver.image", "set spec.image, or spec.driver.image"},
			{field.ErrorTypeRequired, "spec.executor.image", "set spec.image, or spec.executor.image"},
		}},
		{"images per role only", func(a *SparkApplication) {
			a.Spec.Image = nil
			a.Spec.Driver.Image = ptr.To("spark:3.5.5")
			a.Spec.Executor.Image = ptr.To("spark:3.5.5")
		}, nil},
		{"executor image missing without app image", func(a *SparkApplication) {
			a.Spec.Image = nil
			a.Spec.Driver.Image = ptr.To("spark:3.5.5")
		}, []wantErr{{field.ErrorTypeRequired, "spec.executor.image", "no container image for the executor"}}},
		{"empty image strings", func(a *SparkApplication) {
			a.Spec.Image = ptr.To(" ")
			a.Spec.Driver.Image = ptr.To("")
			a.Spec.Executor.Image = ptr.To("spark:3.5.5")
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.image", "must not be empty"},
			{field.ErrorTypeInvalid, "spec.driver.image", "must not be empty; name an image"},
		}},

		// Enums and simple values.
		{"client mode", func(a *SparkApplication) { a.Spec.Mode = DeployModeClient },
			[]wantErr{{field.ErrorTypeInvalid, "spec.mode", "only cluster mode is supported"}}},
		{"imagePullPolicy unknown", func(a *SparkApplication) { a.Spec.ImagePullPolicy = ptr.To("Sometimes") },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.imagePullPolicy", `"IfNotPresent"`}}},
		{"imagePullSecrets empty name", func(a *SparkApplication) { a.Spec.ImagePullSecrets = []string{"ok", ""} },
			[]wantErr{{field.ErrorTypeRequired, "spec.imagePullSecrets[1]", "Secret"}}},
		{"pythonVersion 4", func(a *SparkApplication) { a.Spec.PythonVersion = ptr.To("4") },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.pythonVersion", `"3"`}}},
		{"memoryOverheadFactor not a number", func(a *SparkApplication) { a.Spec.MemoryOverheadFactor = ptr.To("ten percent") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.memoryOverheadFactor", "decimal number"}}},
		{"memoryOverheadFactor zero", func(a *SparkApplication) { a.Spec.MemoryOverheadFactor = ptr.To("0") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.memoryOverheadFactor", "must be > 0"}}},
		{"memoryOverheadFactor and memoryOverhead together are fine", func(a *SparkApplication) {
			a.Spec.MemoryOverheadFactor = ptr.To("0.2")
			a.Spec.Driver.MemoryOverhead = ptr.To("1g")
		}, nil},
		{"negative TTL", func(a *SparkApplication) { a.Spec.TimeToLiveSeconds = ptr.To[int64](-1) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.timeToLiveSeconds", "must be >= 0"}}},
		{"zero TTL", func(a *SparkApplication) { a.Spec.TimeToLiveSeconds = ptr.To[int64](0) }, nil},
		{"TTL at the maximum", func(a *SparkApplication) { a.Spec.TimeToLiveSeconds = ptr.To(MaxSeconds) }, nil},
		{"TTL over the maximum", func(a *SparkApplication) { a.Spec.TimeToLiveSeconds = ptr.To[int64](1e10) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.timeToLiveSeconds", "must be at most 315360000 seconds (10 years); remove the field"}}},
		{"bad package coordinate", func(a *SparkApplication) { a.Spec.Deps.Packages = []string{"org.apache.hadoop:hadoop-aws"} },
			[]wantErr{{field.ErrorTypeInvalid, "spec.deps.packages[0]", "groupId:artifactId:version"}}},
		{"bad exclude coordinate", func(a *SparkApplication) { a.Spec.Deps.ExcludePackages = []string{"a:b:c"} },
			[]wantErr{{field.ErrorTypeInvalid, "spec.deps.excludePackages[0]", "groupId:artifactId"}}},
		{"negative batch scheduler resource", func(a *SparkApplication) {
			a.Spec.BatchSchedulerOptions = &BatchSchedulerConfiguration{Resources: corev1.ResourceList{"cpu": resource.MustParse("-1")}}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.batchSchedulerOptions.resources[cpu]", "must be >= 0"}}},

		// sparkConf.
		{"spark.master in sparkConf", func(a *SparkApplication) { a.Spec.SparkConf["spark.master"] = "local[*]" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.sparkConf[spark.master]", "set by the operator"}}},
		{"image in sparkConf", func(a *SparkApplication) { a.Spec.SparkConf["spark.kubernetes.driver.container.image"] = "x" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.sparkConf[spark.kubernetes.driver.container.image]", "use spec.driver.image"}}},
		{"service account in sparkConf", func(a *SparkApplication) {
			a.Spec.SparkConf["spark.kubernetes.authenticate.executor.serviceAccountName"] = "x"
		}, []wantErr{{field.ErrorTypeForbidden, "spec.sparkConf[spark.kubernetes.authenticate.executor.serviceAccountName]", "use spec.executor.serviceAccount"}}},
		{"oauth token in sparkConf", func(a *SparkApplication) { a.Spec.SparkConf["spark.kubernetes.authenticate.oauthTokenFile"] = "/t" },
			[]wantErr{{field.ErrorTypeForbidden, "spec.sparkConf[spark.kubernetes.authenticate.oauthTokenFile]", "ServiceAccount"}}},
		{"submission oauth token in sparkConf", func(a *SparkApplication) {
			a.Spec.SparkConf["spark.kubernetes.authenticate.submission.oauthToken"] = "t"
		},
			[]wantErr{{field.ErrorTypeForbidden, "spec.sparkConf[spark.kubernetes.authenticate.submission.oauthToken]", "another identity"}}},
		{"mounted driver oauth token file in sparkConf", func(a *SparkApplication) {
			a.Spec.SparkConf["spark.kubernetes.authenticate.driver.mounted.oauthTokenFile"] = "/var/run/token"
		}, []wantErr{{field.ErrorTypeForbidden, "spec.sparkConf[spark.kubernetes.authenticate.driver.mounted.oauthTokenFile]", "another identity"}}},
		{"other namespace in sparkConf", func(a *SparkApplication) { a.Spec.SparkConf["spark.kubernetes.namespace"] = "default" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.sparkConf[spark.kubernetes.namespace]", `runs in namespace "spark-jobs"`}}},
		{"bad memory in sparkConf", func(a *SparkApplication) { a.Spec.SparkConf["spark.driver.memory"] = "1.5g" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.sparkConf[spark.driver.memory]", "fractions"}}},
		{"bad overhead in sparkConf", func(a *SparkApplication) { a.Spec.SparkConf["spark.executor.memoryOverhead"] = "lots" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.sparkConf[spark.executor.memoryOverhead]", "not a Spark memory size"}}},
		{"bad cores in sparkConf", func(a *SparkApplication) { a.Spec.SparkConf["spark.executor.cores"] = "0.5" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.sparkConf[spark.executor.cores]", "whole number of cores > 0"}}},
		{"bad instances in sparkConf", func(a *SparkApplication) { a.Spec.SparkConf["spark.executor.instances"] = "-2" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.sparkConf[spark.executor.instances]", "whole number >= 0"}}},

		// Volumes and mounts.
		{"volume without a name", func(a *SparkApplication) { a.Spec.Volumes = append(a.Spec.Volumes, corev1.Volume{}) },
			[]wantErr{{field.ErrorTypeRequired, "spec.volumes[1].name", "needs a name"}}},
		{"duplicate volume", func(a *SparkApplication) { a.Spec.Volumes = append(a.Spec.Volumes, corev1.Volume{Name: "data"}) },
			[]wantErr{{field.ErrorTypeDuplicate, "spec.volumes[1].name", ""}}},
		{"volume name with capitals", func(a *SparkApplication) { a.Spec.Volumes[0].Name = "Data" }, []wantErr{
			{field.ErrorTypeInvalid, "spec.volumes[0].name", "RFC 1123 label"},
			{field.ErrorTypeNotFound, "spec.driver.volumeMounts[0].name", ""},
		}},
		{"mount of an unknown volume", func(a *SparkApplication) {
			a.Spec.Executor.VolumeMounts = []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}}
		}, []wantErr{{field.ErrorTypeNotFound, "spec.executor.volumeMounts[0].name", `"cache"`}}},
		{"relative mount path", func(a *SparkApplication) { a.Spec.Driver.VolumeMounts[0].MountPath = "data" },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.volumeMounts[0].mountPath", "absolute path"}}},

		// Driver and executor resources.
		{"negative cores", func(a *SparkApplication) { a.Spec.Driver.Cores = ptr.To[int32](-1) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.cores", "must be > 0"}}},
		{"zero executor cores", func(a *SparkApplication) { a.Spec.Executor.Cores = ptr.To[int32](0) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.executor.cores", "must be > 0"}}},
		{"fractional memory", func(a *SparkApplication) { a.Spec.Executor.Memory = ptr.To("1.5g") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.executor.memory", "1536m instead of 1.5g"}}},
		{"Kubernetes-style memory", func(a *SparkApplication) { a.Spec.Driver.Memory = ptr.To("512Mi") }, []wantErr{
			{field.ErrorTypeInvalid, "spec.driver.memory", `unknown unit "mi"`},
		}},
		{"memory below 1 MiB", func(a *SparkApplication) { a.Spec.Driver.Memory = ptr.To("1000k") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.memory", "at least 1m"}}},
		{"memory without a unit is MiB", func(a *SparkApplication) { a.Spec.Driver.Memory = ptr.To("1024") }, nil},
		{"bad memory overhead", func(a *SparkApplication) { a.Spec.Driver.MemoryOverhead = ptr.To("384MiB") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.memoryOverhead", `unknown unit "mib"`}}},
		{"bad memory limit", func(a *SparkApplication) { a.Spec.Driver.MemoryLimit = ptr.To("lots") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.memoryLimit", "Kubernetes quantity"}}},
		{"memory limit as a Kubernetes quantity", func(a *SparkApplication) { a.Spec.Driver.MemoryLimit = ptr.To("2Gi") }, nil},
		{"memory limit below the heap", func(a *SparkApplication) { a.Spec.Driver.MemoryLimit = ptr.To("256Mi") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.memoryLimit", "below driver.memory (512m)"}}},
		{"zero memory limit", func(a *SparkApplication) { a.Spec.Executor.MemoryLimit = ptr.To("0") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.executor.memoryLimit", "must be > 0"}}},
		{"bad core request", func(a *SparkApplication) { a.Spec.Driver.CoreRequest = ptr.To("half") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.coreRequest", "CPU quantity"}}},
		{"zero core request", func(a *SparkApplication) { a.Spec.Executor.CoreRequest = ptr.To("0") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.executor.coreRequest", "must be > 0"}}},
		{"bad core limit", func(a *SparkApplication) { a.Spec.Driver.CoreLimit = ptr.To("1.2.3") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.coreLimit", "CPU quantity"}}},
		{"core request above limit", func(a *SparkApplication) { a.Spec.Driver.CoreRequest = ptr.To("2") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.coreLimit", "below the CPU request 2"}}},
		{"cores above limit without a request", func(a *SparkApplication) {
			a.Spec.Executor.Cores = ptr.To[int32](4)
			a.Spec.Executor.CoreLimit = ptr.To("2")
		}, []wantErr{{field.ErrorTypeInvalid, "spec.executor.coreLimit", "below the CPU request 4"}}},
		{"fractional core request under an integer limit", func(a *SparkApplication) {
			a.Spec.Executor.Cores = ptr.To[int32](4)
			a.Spec.Executor.CoreRequest = ptr.To("1500m")
			a.Spec.Executor.CoreLimit = ptr.To("2")
		}, nil},
		{"zero executor instances", func(a *SparkApplication) { a.Spec.Executor.Instances = ptr.To[int32](0) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.executor.instances", "enable spec.dynamicAllocation"}}},
		{"controller owner reference in a template", func(a *SparkApplication) {
			a.Spec.Executor.Template = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "u1"},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "ctl", UID: "u2", Controller: ptr.To(true)},
			}}}
		}, []wantErr{{field.ErrorTypeForbidden, "spec.executor.template.metadata.ownerReferences[1].controller", "must not be true"}}},
		{"empty GPU, ignored as Kubeflow ignores it", func(a *SparkApplication) { a.Spec.Executor.GPU = &GPUSpec{} }, nil},
		{"GPU count without a name", func(a *SparkApplication) { a.Spec.Driver.GPU = &GPUSpec{Quantity: 1} }, []wantErr{
			{field.ErrorTypeRequired, "spec.driver.gpu.name", "nvidia.com/gpu"},
		}},
		{"GPU name without a count", func(a *SparkApplication) { a.Spec.Executor.GPU = &GPUSpec{Name: "nvidia.com/gpu"} }, []wantErr{
			{field.ErrorTypeInvalid, "spec.executor.gpu.quantity", "must be > 0"},
		}},
		{"GPU with a bad name", func(a *SparkApplication) { a.Spec.Executor.GPU = &GPUSpec{Name: "nvidia.com/gpu!", Quantity: 1} },
			[]wantErr{{field.ErrorTypeInvalid, "spec.executor.gpu.name", ""}}},

		// Pod details.
		{"secret with an unknown type and a relative path", func(a *SparkApplication) {
			a.Spec.Driver.Secrets[0].Type = "Token"
			a.Spec.Driver.Secrets[0].Path = "secrets"
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.driver.secrets[0].path", "absolute path"},
			{field.ErrorTypeNotSupported, "spec.driver.secrets[0].secretType", `"Generic"`},
		}},
		{"config map without a name or path", func(a *SparkApplication) { a.Spec.Executor.ConfigMaps = []NamePath{{}} }, []wantErr{
			{field.ErrorTypeRequired, "spec.executor.configMaps[0].name", "ConfigMap"},
			{field.ErrorTypeRequired, "spec.executor.configMaps[0].path", "absolute path"},
		}},
		{"bad env names", func(a *SparkApplication) {
			a.Spec.Driver.Env = []corev1.EnvVar{{Name: "1BAD"}}
			a.Spec.Driver.EnvVars = map[string]string{"A=B": "x"}
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.driver.env[0].name", "environment variable name"},
			{field.ErrorTypeInvalid, "spec.driver.envVars[A=B]", "environment variable name"},
		}},
		{"envSecretKeyRefs without a key", func(a *SparkApplication) {
			a.Spec.Executor.EnvSecretKeyRefs = map[string]NameKey{"TOKEN": {Name: "creds"}}
		}, []wantErr{{field.ErrorTypeRequired, "spec.executor.envSecretKeyRefs[TOKEN].key", "key of the Secret"}}},
		{"bad label and annotation", func(a *SparkApplication) {
			a.Spec.Driver.Labels = map[string]string{"team": "data science"}
			a.Spec.Executor.Annotations = map[string]string{"bad key!": "x"}
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.driver.labels", "a valid label must be"},
			{field.ErrorTypeInvalid, "spec.executor.annotations", "name part must consist of"},
		}},
		// Spark 4.0 replaces {{APP_ID}} in driver and executor labels; 3.x writes it as it is.
		{"{{APP_ID}} in labels on Spark 4.0", func(a *SparkApplication) {
			a.Spec.SparkVersion = "4.0.1"
			a.Spec.Driver.Labels = map[string]string{"app-id": "{{APP_ID}}"}
			a.Spec.Executor.Labels = map[string]string{"run": "etl-{{APP_ID}}"}
		}, nil},
		{"{{APP_ID}} in labels on Spark 3.5", func(a *SparkApplication) {
			a.Spec.Executor.Labels = map[string]string{"app-id": "{{APP_ID}}"}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.executor.labels[app-id]", "replaced from Spark 4.0 on"}}},
		{"{{APP_ID}} makes a label too long", func(a *SparkApplication) {
			a.Spec.SparkVersion = "4.0.1"
			a.Spec.Driver.Labels = map[string]string{"app-id": strings.Repeat("x", 30) + "{{APP_ID}}"}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.driver.labels", "63 bytes (with {{APP_ID}} replaced by an application id"}}},
		{"sidecar without a name or image, duplicate init container", func(a *SparkApplication) {
			a.Spec.Driver.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox"}}
			a.Spec.Driver.Sidecars = []corev1.Container{{Name: "setup", Image: "envoy"}, {}}
		}, []wantErr{
			{field.ErrorTypeDuplicate, "spec.driver.sidecars[0].name", ""},
			{field.ErrorTypeRequired, "spec.driver.sidecars[1].name", "needs a name"},
			{field.ErrorTypeRequired, "spec.driver.sidecars[1].image", "needs an image"},
		}},
		{"bad service account and scheduler", func(a *SparkApplication) {
			a.Spec.Driver.ServiceAccount = ptr.To("Spark")
			a.Spec.Executor.SchedulerName = ptr.To("")
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.driver.serviceAccount", "RFC 1123 subdomain"},
			{field.ErrorTypeInvalid, "spec.executor.schedulerName", ""},
		}},
		{"negative grace period", func(a *SparkApplication) { a.Spec.Driver.TerminationGracePeriodSeconds = ptr.To[int64](-5) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.terminationGracePeriodSeconds", "must be >= 0"}}},
		{"bad ports", func(a *SparkApplication) {
			a.Spec.Executor.Ports = []Port{{Name: "metrics", Protocol: "HTTP", ContainerPort: 70000}, {Name: "metrics", Protocol: "TCP", ContainerPort: 1}}
		}, []wantErr{
			{field.ErrorTypeNotSupported, "spec.executor.ports[0].protocol", `"TCP"`},
			{field.ErrorTypeInvalid, "spec.executor.ports[0].containerPort", "between 1 and 65535"},
			{field.ErrorTypeDuplicate, "spec.executor.ports[1].name", ""},
		}},
		{"empty kubernetesMaster", func(a *SparkApplication) { a.Spec.Driver.KubernetesMaster = ptr.To("") },
			[]wantErr{{field.ErrorTypeInvalid, "spec.driver.kubernetesMaster", "must not be empty"}}},
		{"pod template with Spark 2", func(a *SparkApplication) {
			a.Spec.SparkVersion = "2.4.8"
			a.Spec.Executor.Template = &corev1.PodTemplateSpec{}
		}, []wantErr{{field.ErrorTypeForbidden, "spec.executor.template", "Spark 3.0.0 or later, and spec.sparkVersion is 2.4.8"}}},
		{"pod template with Spark 3", func(a *SparkApplication) { a.Spec.Driver.Template = &corev1.PodTemplateSpec{} }, nil},

		// Mutually exclusive fields.
		{"node selector on app and roles", func(a *SparkApplication) {
			a.Spec.NodeSelector = map[string]string{"pool": "spark"}
			a.Spec.Driver.NodeSelector = map[string]string{"pool": "drivers"}
			a.Spec.Executor.NodeSelector = map[string]string{"pool": "executors"}
		}, []wantErr{
			{field.ErrorTypeForbidden, "spec.driver.nodeSelector", "cannot be combined with spec.nodeSelector"},
			{field.ErrorTypeForbidden, "spec.executor.nodeSelector", "cannot be combined with spec.nodeSelector"},
		}},
		{"node selector on roles only", func(a *SparkApplication) {
			a.Spec.Driver.NodeSelector = map[string]string{"pool": "drivers"}
			a.Spec.Executor.NodeSelector = map[string]string{"pool": "executors"}
		}, nil},
		{"bad node selector value", func(a *SparkApplication) { a.Spec.NodeSelector = map[string]string{"pool": "a b"} },
			[]wantErr{{field.ErrorTypeInvalid, "spec.nodeSelector", "a valid label must be"}}},

		// Restart policy.
		{"unknown restart policy", func(a *SparkApplication) { a.Spec.RestartPolicy.Type = "Sometimes" },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.restartPolicy.type", `"OnFailure"`}}},
		{"negative retries and zero intervals", func(a *SparkApplication) {
			a.Spec.RestartPolicy.OnFailureRetries = ptr.To[int32](-1)
			a.Spec.RestartPolicy.OnSubmissionFailureRetries = ptr.To[int32](-2)
			a.Spec.RestartPolicy.OnFailureRetryInterval = ptr.To[int64](0)
			a.Spec.RestartPolicy.OnSubmissionFailureRetryInterval = ptr.To[int64](-10)
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.restartPolicy.onSubmissionFailureRetries", "must be >= 0"},
			{field.ErrorTypeInvalid, "spec.restartPolicy.onFailureRetries", "must be >= 0"},
			{field.ErrorTypeInvalid, "spec.restartPolicy.onSubmissionFailureRetryInterval", "must be > 0 seconds"},
			{field.ErrorTypeInvalid, "spec.restartPolicy.onFailureRetryInterval", "must be > 0 seconds"},
		}},
		{"retry intervals at the maximum", func(a *SparkApplication) {
			a.Spec.RestartPolicy.OnFailureRetryInterval = ptr.To(MaxSeconds)
			a.Spec.RestartPolicy.OnSubmissionFailureRetryInterval = ptr.To(MaxSeconds)
		}, nil},
		{"retry intervals over the maximum", func(a *SparkApplication) {
			a.Spec.RestartPolicy.OnFailureRetryInterval = ptr.To(MaxSeconds + 1)
			a.Spec.RestartPolicy.OnSubmissionFailureRetryInterval = ptr.To[int64](math.MaxInt64)
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.restartPolicy.onSubmissionFailureRetryInterval", "must be at most 315360000 seconds"},
			{field.ErrorTypeInvalid, "spec.restartPolicy.onFailureRetryInterval", "must be at most 315360000 seconds"},
		}},

		// Dynamic allocation.
		{"dynamic allocation within bounds", func(a *SparkApplication) {
			a.Spec.DynamicAllocation = &DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](2), MinExecutors: ptr.To[int32](1), MaxExecutors: ptr.To[int32](10)}
		}, nil},
		{"dynamic allocation min above max", func(a *SparkApplication) {
			a.Spec.DynamicAllocation = &DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](5), MaxExecutors: ptr.To[int32](3)}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.dynamicAllocation.minExecutors", "<= dynamicAllocation.maxExecutors (3)"}}},
		{"dynamic allocation initial above max", func(a *SparkApplication) {
			a.Spec.DynamicAllocation = &DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](5), MaxExecutors: ptr.To[int32](4)}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.dynamicAllocation.initialExecutors", "<= dynamicAllocation.maxExecutors (4)"}}},
		{"dynamic allocation max zero", func(a *SparkApplication) {
			a.Spec.DynamicAllocation = &DynamicAllocation{Enabled: true, MaxExecutors: ptr.To[int32](0)}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.dynamicAllocation.maxExecutors", "must be >= 1"}}},
		{"dynamic allocation negative values", func(a *SparkApplication) {
			a.Spec.DynamicAllocation = &DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](-1), InitialExecutors: ptr.To[int32](-1), ShuffleTrackingTimeout: ptr.To[int64](-1)}
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.dynamicAllocation.minExecutors", "must be >= 0"},
			{field.ErrorTypeInvalid, "spec.dynamicAllocation.initialExecutors", "must be >= 0"},
			{field.ErrorTypeInvalid, "spec.dynamicAllocation.shuffleTrackingTimeout", "must be >= 0 milliseconds"},
		}},
		{"executor instances above dynamic allocation max", func(a *SparkApplication) {
			a.Spec.Executor.Instances = ptr.To[int32](20)
			a.Spec.DynamicAllocation = &DynamicAllocation{Enabled: true, MaxExecutors: ptr.To[int32](10)}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.executor.instances", "must be <= dynamicAllocation.maxExecutors (10)"}}},
		{"disabled dynamic allocation is not checked", func(a *SparkApplication) {
			a.Spec.DynamicAllocation = &DynamicAllocation{MinExecutors: ptr.To[int32](5), MaxExecutors: ptr.To[int32](3)}
		}, nil},

		// Monitoring.
		{"prometheus without the exporter jar and a low port", func(a *SparkApplication) {
			a.Spec.Monitoring = &MonitoringSpec{ExposeDriverMetrics: true, Prometheus: &PrometheusSpec{Port: ptr.To[int32](80)}}
		}, []wantErr{
			{field.ErrorTypeRequired, "spec.monitoring.prometheus.jmxExporterJar", "JMX exporter jar"},
			{field.ErrorTypeInvalid, "spec.monitoring.prometheus.port", "between 1024 and 49151"},
		}},
		{"prometheus port name too long", func(a *SparkApplication) {
			a.Spec.Monitoring = &MonitoringSpec{Prometheus: &PrometheusSpec{JmxExporterJar: "/j.jar", PortName: ptr.To("jmx-exporter-port")}}
		}, []wantErr{{field.ErrorTypeInvalid, "spec.monitoring.prometheus.portName", "no more than 15 characters"}}},

		// UI and ingress options.
		{"UI port out of range and bad service type", func(a *SparkApplication) {
			a.Spec.SparkUIOptions = &SparkUIConfiguration{ServicePort: ptr.To[int32](0), ServiceType: ptr.To(corev1.ServiceTypeExternalName)}
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.servicePort", "between 1 and 65535"},
			{field.ErrorTypeNotSupported, "spec.sparkUIOptions.serviceType", `"ClusterIP"`},
		}},
		{"driver ingress options missing and duplicated", func(a *SparkApplication) {
			a.Spec.DriverIngressOptions = []DriverIngressConfiguration{
				{ServicePort: ptr.To[int32](8080), ServicePortName: ptr.To("http"), IngressURLFormat: "{{$appName}}.example.com"},
				{ServicePort: ptr.To[int32](8080), ServicePortName: ptr.To("http2"), IngressURLFormat: "{{$appName}}.example.com"},
				{},
			}
		}, []wantErr{
			{field.ErrorTypeDuplicate, "spec.driverIngressOptions[1].servicePort", ""},
			{field.ErrorTypeDuplicate, "spec.driverIngressOptions[1].ingressURLFormat", ""},
			{field.ErrorTypeRequired, "spec.driverIngressOptions[2].servicePort", "driver port"},
			{field.ErrorTypeRequired, "spec.driverIngressOptions[2].servicePortName", "port name"},
			{field.ErrorTypeRequired, "spec.driverIngressOptions[2].ingressURLFormat", "Ingress URL"},
		}},
		{"ui http route valid with placeholders", func(a *SparkApplication) {
			a.Spec.SparkUIOptions = &SparkUIConfiguration{HTTPRoute: &HTTPRouteConfiguration{
				ParentRefs: []GatewayParentReference{{Name: "public", Namespace: "gateways", SectionName: "https"}},
				Hostnames:  []string{"{{$appName}}.spark.example.com", "*.spark.example.com"},
				PathPrefix: "/ui/{{$appNamespace}}/{{$appId}}",
			}}
		}, nil},
		{"ui http route invalid", func(a *SparkApplication) {
			a.Spec.SparkUIOptions = &SparkUIConfiguration{HTTPRoute: &HTTPRouteConfiguration{
				ParentRefs:  []GatewayParentReference{{Namespace: "Gateways"}, {Name: "gw", SectionName: "HTTPS"}, {Name: "gw", SectionName: "HTTPS"}},
				Hostnames:   []string{"10.0.0.1", "Spark.example.com", "{{$user}}.example.com"},
				PathPrefix:  "ui//{{$appName}}?x",
				Annotations: map[string]string{"bad key!": "v"},
			}}
		}, []wantErr{
			{field.ErrorTypeRequired, "spec.sparkUIOptions.httpRoute.parentRefs[0].name", "the Gateway's name"},
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.httpRoute.parentRefs[0].namespace", "lowercase"},
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.httpRoute.parentRefs[1].sectionName", "the name of a Gateway listener"},
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.httpRoute.parentRefs[2].sectionName", "the name of a Gateway listener"},
			{field.ErrorTypeDuplicate, "spec.sparkUIOptions.httpRoute.parentRefs[2]", ""},
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.httpRoute.hostnames[0]", "not an IP address"},
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.httpRoute.hostnames[1]", "lower-case DNS name"},
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.httpRoute.hostnames[2]", "a placeholder other than {{$appName}}"},
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.httpRoute.pathPrefix", "must start with /; must be URL path characters only"},
			{field.ErrorTypeInvalid, "spec.sparkUIOptions.httpRoute.annotations", ""},
		}},

		// Extensions.
		{"zero and negative timeouts", func(a *SparkApplication) {
			a.Spec.Timeouts = &SparkApplicationTimeouts{DriverStartSeconds: ptr.To[int64](0), DriverReadySeconds: ptr.To[int64](-1), ExecutorsStartSeconds: ptr.To[int64](0)}
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.timeouts.driverStartSeconds", "remove it for no timeout"},
			{field.ErrorTypeInvalid, "spec.timeouts.driverReadySeconds", "must be > 0 seconds"},
			{field.ErrorTypeInvalid, "spec.timeouts.executorsStartSeconds", "must be > 0 seconds"},
		}},
		{"timeouts at the maximum", func(a *SparkApplication) {
			a.Spec.Timeouts = &SparkApplicationTimeouts{DriverStartSeconds: ptr.To(MaxSeconds), DriverReadySeconds: ptr.To(MaxSeconds), ExecutorsStartSeconds: ptr.To(MaxSeconds)}
		}, nil},
		{"timeouts over the maximum", func(a *SparkApplication) {
			a.Spec.Timeouts = &SparkApplicationTimeouts{DriverStartSeconds: ptr.To(MaxSeconds + 1), DriverReadySeconds: ptr.To[int64](1e10), ExecutorsStartSeconds: ptr.To[int64](math.MaxInt64)}
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.timeouts.driverStartSeconds", "must be at most 315360000 seconds (10 years); remove it for no timeout"},
			{field.ErrorTypeInvalid, "spec.timeouts.driverReadySeconds", "must be at most 315360000 seconds"},
			{field.ErrorTypeInvalid, "spec.timeouts.executorsStartSeconds", "must be at most 315360000 seconds"},
		}},
		{"unknown retain policy", func(a *SparkApplication) { a.Spec.ResourceRetainPolicy = ptr.To[ResourceRetainPolicy]("Sometimes") },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.resourceRetainPolicy", `"OnFailure"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := validApp()
			tt.mutate(app)
			assertErrors(t, tt.want, ValidateSparkApplication(app))
		})
	}
}

func TestValidateSparkApplicationMessage(t *testing.T) {
	app := validApp()
	app.Spec.Driver.Cores = ptr.To[int32](-1)
	errs := ValidateSparkApplication(app)
	assert.Equal(t, "spec.driver.cores: Invalid value: -1: must be > 0", errs.ToAggregate().Error())
}

func TestValidateScheduledSparkApplication(t *testing.T) {
	valid := func() *ScheduledSparkApplication {
		return &ScheduledSparkApplication{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly-pi", Namespace: "spark-jobs"},
			Spec: ScheduledSparkApplicationSpec{
				Schedule:          "0 3 * * *",
				ConcurrencyPolicy: ConcurrencyForbid,
				Template:          validApp().Spec,
			},
		}
	}
	tests := []struct {
		name   string
		mutate func(*ScheduledSparkApplication)
		want   []wantErr
	}{
		{"valid", func(*ScheduledSparkApplication) {}, nil},
		{"defaulted", SetScheduledSparkApplicationDefaults, nil},
		{"bad name", func(s *ScheduledSparkApplication) { s.Name = "Nightly" },
			[]wantErr{{field.ErrorTypeInvalid, "metadata.name", "DNS-1035 label"}}},
		{"schedule missing", func(s *ScheduledSparkApplication) { s.Spec.Schedule = " " },
			[]wantErr{{field.ErrorTypeRequired, "spec.schedule", "cron schedule"}}},
		{"unknown concurrency policy", func(s *ScheduledSparkApplication) { s.Spec.ConcurrencyPolicy = "Queue" },
			[]wantErr{{field.ErrorTypeNotSupported, "spec.concurrencyPolicy", `"Forbid"`}}},
		{"empty concurrency policy", func(s *ScheduledSparkApplication) { s.Spec.ConcurrencyPolicy = "" }, nil},
		{"negative history limits", func(s *ScheduledSparkApplication) {
			s.Spec.SuccessfulRunHistoryLimit = ptr.To[int32](-1)
			s.Spec.FailedRunHistoryLimit = ptr.To[int32](-1)
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.successfulRunHistoryLimit", "must be >= 0"},
			{field.ErrorTypeInvalid, "spec.failedRunHistoryLimit", "must be >= 0"},
		}},
		{"zero history limits", func(s *ScheduledSparkApplication) {
			s.Spec.SuccessfulRunHistoryLimit = ptr.To[int32](0)
			s.Spec.FailedRunHistoryLimit = ptr.To[int32](0)
		}, nil},
		{"zero starting deadline", func(s *ScheduledSparkApplication) { s.Spec.StartingDeadlineSeconds = ptr.To[int64](0) }, nil},
		{"starting deadline at the maximum", func(s *ScheduledSparkApplication) { s.Spec.StartingDeadlineSeconds = ptr.To(MaxSeconds) }, nil},
		{"negative starting deadline", func(s *ScheduledSparkApplication) { s.Spec.StartingDeadlineSeconds = ptr.To[int64](-1) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.startingDeadlineSeconds", "must not be negative"}}},
		{"starting deadline over the maximum", func(s *ScheduledSparkApplication) { s.Spec.StartingDeadlineSeconds = ptr.To[int64](1e10) },
			[]wantErr{{field.ErrorTypeInvalid, "spec.startingDeadlineSeconds", "must be at most 315360000 seconds (10 years)"}}},
		{"template errors carry the template path", func(s *ScheduledSparkApplication) {
			s.Spec.Template.Executor.Memory = ptr.To("1.5g")
			s.Spec.Template.SparkConf["spark.kubernetes.namespace"] = "other"
		}, []wantErr{
			{field.ErrorTypeInvalid, "spec.template.sparkConf[spark.kubernetes.namespace]", `"spark-jobs"`},
			{field.ErrorTypeInvalid, "spec.template.executor.memory", "fractions"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ssa := valid()
			tt.mutate(ssa)
			assertErrors(t, tt.want, ValidateScheduledSparkApplication(ssa))
		})
	}
}

// assertErrors checks that got holds exactly the wanted errors, in order.
func assertErrors(t *testing.T, want []wantErr, got field.ErrorList) {
	t.Helper()
	if !assert.Len(t, got, len(want), "errors: %v", got) {
		return
	}
	for i, w := range want {
		assert.Equal(t, w.typ, got[i].Type, "error %d: %v", i, got[i])
		assert.Equal(t, w.path, got[i].Field, "error %d: %v", i, got[i])
		assert.Contains(t, got[i].Error(), w.detail, "error %d", i)
	}
}

func TestStandaloneMaster(t *testing.T) {
	for master, want := range map[string]bool{
		"spark://prod-master-svc:7077":         true,
		"spark://m1:7077,m2:7077":              true,
		" spark://prod-master-svc:7077 ":       true,
		"spark://prod-master-svc":              false,
		"spark://:7077":                        false,
		"spark://prod-master-svc:http":         false,
		"spark://prod-master-svc:70770":        false,
		"k8s://https://kubernetes.default.svc": false,
		"local[*]":                             false,
		"":                                     false,
	} {
		if got := StandaloneMaster(master); got != want {
			t.Errorf("StandaloneMaster(%q) = %v, want %v", master, got, want)
		}
	}
}
