package children

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// Paths inside the Spark containers.
const (
	sparkConfDir          = "/opt/spark/conf"
	propertiesFile        = "spark.properties"
	propertiesPath        = sparkConfDir + "/" + propertiesFile
	podTemplateDir        = "/opt/spark/pod-template"
	podTemplateFile       = "pod-spec-template.yml"
	executorTemplateKey   = "executor-pod-template.json"
	metricsConfDir        = "/etc/metrics/conf"
	hadoopConfDir         = "/etc/hadoop/conf"
	userSparkConfDir      = "/etc/spark/conf"
	defaultLocalDirParent = "/var/data"
)

// Spark's default ports.
const (
	defaultDriverPort       = 7078
	defaultBlockManagerPort = 7079
	defaultUIPort           = 4040
)

// Main classes of the runners Spark uses for non-JVM applications.
const (
	pythonRunner = "org.apache.spark.deploy.PythonRunner"
	rRunner      = "org.apache.spark.deploy.RRunner"
)

// builder carries one Build: the inputs, the names every step agrees on, and the objects as
// they take shape.
type builder struct {
	app     *v1beta2.SparkApplication
	spec    *v1beta2.SparkApplicationSpec
	sub     Submission
	opts    Options
	version sparkVersion

	driverPodName     string
	driverServiceName string
	conf              properties

	executorPodTemplate []byte      // JSON, nil when Spark cannot use one
	executorPod         *corev1.Pod // the template before encoding, nil when Spark cannot use one
	objs                Objects
}

func newBuilder(app *v1beta2.SparkApplication, sub Submission, opts Options) *builder {
	spec := &app.Spec
	b := &builder{
		app:     app,
		spec:    spec,
		sub:     sub,
		opts:    opts,
		version: parseSparkVersion(spec.SparkVersion),
		conf:    make(properties, 64),
	}
	b.driverPodName = app.Name + "-driver"
	if name := spec.SparkConf["spark.kubernetes.driver.pod.name"]; name != "" {
		b.driverPodName = name
	}
	if spec.Driver.PodName != nil && *spec.Driver.PodName != "" {
		b.driverPodName = *spec.Driver.PodName
	}
	// Each attempt's driver Service has a name of its own, as Spark's random prefix gives it:
	// executors an earlier attempt left behind look its name up while no driver answers, and
	// cluster DNS caches that the name does not exist (CoreDNS: 30 s) for the next attempt too.
	b.driverServiceName = boundedName(app.Name+"-"+b.attemptID(), "-driver-svc", maxLabelName)
	if opts.Apache {
		// Apache's names: <name>-0-driver-svc for the first attempt, which clients such as its
		// examples/job address, <name>-1-driver-svc for the second, and so on.
		b.driverServiceName = boundedName(app.Name, "-"+strconv.Itoa(int(max(sub.Attempt-1, 0)))+"-driver-svc", maxLabelName)
	}
	return b
}

func (b *builder) jvm() bool {
	return b.spec.Type != v1beta2.SparkApplicationTypePython && b.spec.Type != v1beta2.SparkApplicationTypeR
}

func (b *builder) namespace() string { return b.app.Namespace }

// image is the container image of a role.
func (b *builder) image(role *v1beta2.SparkPodSpec) string {
	if role.Image != nil && *role.Image != "" {
		return *role.Image
	}
	if b.spec.Image != nil {
		return *b.spec.Image
	}
	return ""
}

// port reads a port property, def when unset or unreadable (validation reports the latter).
func (b *builder) port(def int32, keys ...string) int32 {
	for _, key := range keys {
		if v := strings.TrimSpace(b.conf.get(key)); v != "" {
			if n, ok := parsePort(v); ok {
				return n
			}
		}
	}
	return def
}

func parsePort(s string) (int32, bool) {
	n := int32(0)
	for _, r := range s {
		if r < '0' || r > '9' || n > 65535 {
			return 0, false
		}
		n = n*10 + int32(r-'0')
	}
	return n, n <= 65535
}

func (b *builder) driverPort() int32 { return b.port(defaultDriverPort, "spark.driver.port") }

func (b *builder) blockManagerPort() int32 {
	return b.port(defaultBlockManagerPort, "spark.driver.blockManager.port", "spark.blockManager.port")
}

func (b *builder) uiPort() int32 { return b.port(defaultUIPort, "spark.ui.port") }

// uiEnabled is false when the application turns Spark's UI off.
func (b *builder) uiEnabled() bool {
	return !strings.EqualFold(strings.TrimSpace(b.conf.get("spark.ui.enabled")), "false")
}

func configMapVolume(name, configMap string, items ...corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{
		Name: name,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: configMap},
			Items:                items,
		}},
	}
}
