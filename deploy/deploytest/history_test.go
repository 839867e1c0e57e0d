package deploytest

import (
	"encoding/json"
	"strings"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// historyServerComponent is the component label of the History Server's objects.
const historyServerComponent = "history-server"

// historyServerObjects are the objects the chart renders for historyServer.enabled.
type historyServerObjects struct {
	configMap  *corev1.ConfigMap
	deployment *appsv1.Deployment
	service    *corev1.Service
	ingress    *networkingv1.Ingress
}

// add keeps obj when it is one of the History Server's, and says whether it did.
func (h *historyServerObjects) add(obj runtime.Object) bool {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		if o.Labels["app.kubernetes.io/component"] == historyServerComponent {
			h.configMap = o
			return true
		}
	case *appsv1.Deployment:
		if o.Labels["app.kubernetes.io/component"] == historyServerComponent {
			h.deployment = o
			return true
		}
	case *corev1.Service:
		if o.Labels["app.kubernetes.io/component"] == historyServerComponent {
			h.service = o
			return true
		}
	case *networkingv1.Ingress:
		if o.Labels["app.kubernetes.io/component"] == historyServerComponent {
			h.ingress = o
			return true
		}
	}
	return false
}

// historyServer checks the History Server against the hook server's flags: it reads the dir the
// drivers write to, on the same volume, and --history-server-url is where users reach it.
func (c *renderedChart) historyServer() {
	t := c.t
	h := c.m.historyServer
	dir, hasDir := c.arg("default-event-log-dir")
	url, hasURL := c.arg("history-server-url")
	if !c.r.historyServer {
		assert.Equal(t, historyServerObjects{}, h, "no History Server unless the values enable it")
		assert.False(t, hasDir || hasURL, "no event log flags unless the values set them")
		return
	}
	require.NotNil(t, h.configMap)
	require.NotNil(t, h.deployment)
	require.NotNil(t, h.service)
	require.NotNil(t, h.ingress)
	assert.Equal(t, "file:/spark-events", dir)
	assert.Contains(t, h.configMap.Data["spark-defaults.conf"], "spark.history.fs.logDirectory "+dir+"\n")

	volumeArg, ok := c.arg("default-event-log-volume")
	require.True(t, ok, "a local event log dir needs its volume")
	var driverVolume corev1.Volume
	require.NoError(t, json.Unmarshal([]byte(volumeArg), &driverVolume))

	dep := h.deployment
	assert.Equal(t, dep.Spec.Selector.MatchLabels, h.service.Spec.Selector)
	hookServerPod := true
	for k, v := range c.dep.Spec.Selector.MatchLabels {
		hookServerPod = hookServerPod && dep.Spec.Template.Labels[k] == v
	}
	assert.False(t, hookServerPod, "the History Server's Pod labels %v match the hook server's selector: its Service and PodDisruptionBudget would take it", dep.Spec.Template.Labels)

	pod := dep.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	ctr := pod.Containers[0]
	assert.Equal(t, []string{"/opt/spark/bin/spark-class", "org.apache.spark.deploy.history.HistoryServer"}, ctr.Command)
	var mountPath string
	for _, m := range ctr.VolumeMounts {
		if m.Name == "event-log" {
			mountPath = m.MountPath
		}
	}
	assert.Equal(t, strings.TrimPrefix(dir, "file:"), mountPath, "mounted where the drivers write")
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	assert.Len(t, volumes, len(pod.Volumes), "volume names are unique")
	assert.Equal(t, driverVolume.VolumeSource, volumes["event-log"], "the drivers' volume")
	// historyServer.volumes and volumeMounts: a volume of jars, mounted where
	// SPARK_DAEMON_CLASSPATH names them, besides the event log's volume.
	jars, ok := volumes["extra-jars"]
	require.True(t, ok, "historyServer.volumes adds its volume: %v", pod.Volumes)
	require.NotNil(t, jars.PersistentVolumeClaim)
	assert.Equal(t, "spark-history-jars", jars.PersistentVolumeClaim.ClaimName)
	assert.Contains(t, ctr.VolumeMounts, corev1.VolumeMount{Name: "extra-jars", MountPath: "/opt/extra-jars", ReadOnly: true})
	assert.Contains(t, ctr.Env, corev1.EnvVar{Name: "SPARK_DAEMON_CLASSPATH", Value: "/opt/extra-jars/*"})
	for _, m := range ctr.VolumeMounts {
		_, ok := volumes[m.Name]
		assert.True(t, ok, "the container mounts %s, which the Pod does not have", m.Name)
	}
	require.NotNil(t, ctr.ReadinessProbe)
	require.NotNil(t, ctr.ReadinessProbe.HTTPGet)
	assert.True(t, strings.HasPrefix(ctr.ReadinessProbe.HTTPGet.Path, "/api/v1/applications"))

	require.Len(t, h.ingress.Spec.Rules, 1)
	assert.True(t, hasURL)
	assert.Equal(t, "https://"+h.ingress.Spec.Rules[0].Host, url, "--history-server-url is the Ingress's URL")
	assert.Equal(t, h.service.Name, h.ingress.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Name)
}
