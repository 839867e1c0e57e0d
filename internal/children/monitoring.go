package children

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

const (
	defaultPrometheusPort     int32 = 8090
	defaultPrometheusPortName       = "jmx-exporter"
	metricsPropertiesKey            = "metrics.properties"
	prometheusConfigKey             = "prometheus.yaml"
)

// defaultMetricsProperties route Spark's metrics to JMX, where the exporter reads them.
const defaultMetricsProperties = `*.sink.jmx.class=org.apache.spark.metrics.sink.JmxSink
driver.source.jvm.class=org.apache.spark.metrics.source.JvmSource
executor.source.jvm.class=org.apache.spark.metrics.source.JvmSource
`

// defaultPrometheusConfig is a JMX exporter configuration that names Spark's metrics after
// their source and keeps the application and executor ids as labels, so that one dashboard
// works for every application.
const defaultPrometheusConfig = `lowercaseOutputName: true
lowercaseOutputLabelNames: true
attrNameSnakeCase: true
rules:
  # metrics.<namespace>.<executor id>.<source>.<name>, for gauges and counters
  - pattern: metrics<name=([^.]+)\.([^.]+)\.([^.]+)\.(.+)><>Value
    name: spark_$3_$4
    type: GAUGE
    labels:
      app_namespace: "$1"
      executor_id: "$2"
  - pattern: metrics<name=([^.]+)\.([^.]+)\.([^.]+)\.(.+)><>Count
    name: spark_$3_$4_total
    type: COUNTER
    labels:
      app_namespace: "$1"
      executor_id: "$2"
  # timers and histograms
  - pattern: metrics<name=([^.]+)\.([^.]+)\.([^.]+)\.(.+)><>(Mean|50thPercentile|99thPercentile)
    name: spark_$3_$4_$5
    type: GAUGE
    labels:
      app_namespace: "$1"
      executor_id: "$2"
  - pattern: ".*"
`

// monitoring sets up Prometheus scraping as the Kubeflow operator does: Spark reports to JMX,
// the JMX exporter agent serves it on a port of each exposed role, and the configuration
// travels in a ConfigMap mounted at /etc/metrics/conf.
func (b *builder) monitoring() {
	m := b.spec.Monitoring
	if m == nil || m.Prometheus == nil {
		return
	}
	p := m.Prometheus
	c := b.conf
	c.set("spark.metrics.namespace", b.namespace()+"."+b.app.Name)
	metricsConf := metricsConfDir + "/" + metricsPropertiesKey
	if m.MetricsPropertiesFile != nil && *m.MetricsPropertiesFile != "" {
		metricsConf = *m.MetricsPropertiesFile
	}
	c.set("spark.metrics.conf", metricsConf)

	data := map[string]string{}
	if m.MetricsPropertiesFile == nil || *m.MetricsPropertiesFile == "" {
		data[metricsPropertiesKey] = defaultMetricsProperties
		if m.MetricsProperties != nil && *m.MetricsProperties != "" {
			data[metricsPropertiesKey] = *m.MetricsProperties
		}
	}
	exporterConf := metricsConfDir + "/" + prometheusConfigKey
	if p.ConfigFile != nil && *p.ConfigFile != "" {
		exporterConf = *p.ConfigFile
	} else {
		data[prometheusConfigKey] = defaultPrometheusConfig
		if p.Configuration != nil && *p.Configuration != "" {
			data[prometheusConfigKey] = *p.Configuration
		}
	}
	if len(data) > 0 {
		b.objs.MetricsConfig = &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      boundedName(b.app.Name, "-prom-conf", maxSubdomainName),
				Namespace: b.namespace(),
				Labels:    map[string]string{sparkpod.LabelAppName: b.app.Name, sparkpod.LabelCreatedBy: "true"},
			},
			Data: data,
		}
	}

	port := defaultPrometheusPort
	if p.Port != nil {
		port = *p.Port
	}
	agent := "-javaagent:" + p.JmxExporterJar + "=" + strconv.Itoa(int(port)) + ":" + exporterConf
	for _, role := range []struct {
		name    string
		exposed bool
	}{{"driver", m.ExposeDriverMetrics}, {"executor", m.ExposeExecutorMetrics}} {
		if !role.exposed {
			continue
		}
		key := "spark." + role.name + ".extraJavaOptions"
		c.set(key, strings.TrimSpace(c.get(key)+" "+agent))
		prefix := "spark.kubernetes." + role.name + ".annotation."
		c.set(prefix+"prometheus.io/scrape", "true")
		c.set(prefix+"prometheus.io/port", strconv.Itoa(int(port)))
		c.set(prefix+"prometheus.io/path", "/metrics")
	}
}

// metricsCustomization adds, to a role's Pods, the metrics ConfigMap and the exporter's port.
func (b *builder) metricsCustomization(exposed bool) ([]corev1.Volume, []corev1.VolumeMount, []corev1.ContainerPort) {
	m := b.spec.Monitoring
	if m == nil || m.Prometheus == nil {
		return nil, nil, nil
	}
	var (
		vols   []corev1.Volume
		mounts []corev1.VolumeMount
		ports  []corev1.ContainerPort
	)
	if cm := b.objs.MetricsConfig; cm != nil {
		name := boundedName(b.app.Name, "-prom-conf-vol", maxLabelName)
		vols = append(vols, configMapVolume(name, cm.Name))
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: metricsConfDir})
	}
	if exposed {
		port := defaultPrometheusPort
		if m.Prometheus.Port != nil {
			port = *m.Prometheus.Port
		}
		name := defaultPrometheusPortName
		if m.Prometheus.PortName != nil && *m.Prometheus.PortName != "" {
			name = *m.Prometheus.PortName
		}
		ports = append(ports, corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP})
	}
	return vols, mounts, ports
}
