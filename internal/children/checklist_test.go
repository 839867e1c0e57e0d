package children_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/javaprops"
)

// built is one example, built for its first attempt, with its properties read back as the
// driver reads them.
type built struct {
	app  *v1beta2.SparkApplication
	objs *children.Objects
	conf map[string]string
}

func buildExamples(t *testing.T) map[string]built {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	require.NoError(t, err)
	out := map[string]built{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		app := &v1beta2.SparkApplication{}
		require.NoError(t, yaml.Unmarshal(data, app), file)
		switch app.Kind {
		case v1beta2.KindSparkApplication:
		case v1alpha1.KindSparkConnect:
			// A Spark Connect server is a driver whose main class is the server: the same
			// checklist holds, the entrypoint's driver mode being client-mode spark-submit.
			sc := &v1alpha1.SparkConnect{}
			require.NoError(t, yaml.Unmarshal(data, sc), file)
			app = v1alpha1.ServerApplication(sc)
		default:
			continue
		}
		app.Namespace, app.UID = "spark-jobs", "0f0e0d0c-0000-4000-8000-000000000001"
		v1beta2.SetSparkApplicationDefaults(app)
		require.Empty(t, v1beta2.ValidateSparkApplication(app), file)
		objs, err := children.Build(app, children.NewSubmission(app.UID, 1), children.Options{EnableUIService: true})
		require.NoError(t, err, file)
		conf, err := javaprops.Parse(objs.ConfigMap.Data["spark.properties"])
		require.NoError(t, err, file)
		out[filepath.Base(file)] = built{app: app, objs: objs, conf: conf}
	}
	require.GreaterOrEqual(t, len(out), 10)
	return out
}

// TestStockImageChecklist checks every example's driver against the checklist of a driver Pod
// the stock Spark image accepts (shared/research/spark-pod.md §9).
func TestStockImageChecklist(t *testing.T) {
	for file, b := range buildExamples(t) {
		t.Run(file, func(t *testing.T) {
			checkPod(t, b)
			checkConfigMap(t, b)
			checkService(t, b)
		})
	}
}

func sparkContainer(t *testing.T, pod *corev1.Pod) *corev1.Container {
	t.Helper()
	var found *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == sparkpod.DriverContainerName {
			require.Nil(t, found, "two Spark containers")
			found = &pod.Spec.Containers[i]
		}
	}
	require.NotNil(t, found, "no container named %s", sparkpod.DriverContainerName)
	return found
}

func env(ctr *corev1.Container, name string) *corev1.EnvVar {
	for i := range ctr.Env {
		if ctr.Env[i].Name == name {
			return &ctr.Env[i]
		}
	}
	return nil
}

func checkPod(t *testing.T, b built) {
	pod, conf := b.objs.DriverPod, b.conf
	assert.Empty(t, validation.IsDNS1123Subdomain(pod.Name), "pod name")
	assert.Equal(t, pod.Name, conf["spark.kubernetes.driver.pod.name"])
	assert.Equal(t, pod.Namespace, conf["spark.kubernetes.namespace"])

	appID := conf["spark.app.id"]
	assert.Regexp(t, `^spark-[0-9a-f]{32}$`, appID)
	assert.Equal(t, appID, pod.Labels[sparkpod.LabelAppSelector])
	assert.Empty(t, validation.IsValidLabelValue(appID))
	assert.Equal(t, sparkpod.RoleDriver, pod.Labels[sparkpod.LabelSparkRole])
	for k, v := range pod.Labels {
		assert.Empty(t, validation.IsValidLabelValue(v), "label %s", k)
	}

	assert.Equal(t, corev1.RestartPolicyNever, pod.Spec.RestartPolicy)
	ctr := sparkContainer(t, pod)
	assert.Empty(t, ctr.Command, "the image's entrypoint must run")
	image := conf["spark.kubernetes.driver.container.image"]
	if image == "" {
		image = conf["spark.kubernetes.container.image"]
	}
	assert.Equal(t, image, ctr.Image)

	// args: driver|driver-py|driver-r, [--proxy-user u], --properties-file path, --class c, resource, args
	require.NotEmpty(t, ctr.Args)
	assert.Contains(t, []string{"driver", "driver-py", "driver-r"}, ctr.Args[0])
	i := slices.Index(ctr.Args, "--properties-file")
	require.Positive(t, i)
	assert.Equal(t, "/opt/spark/conf/spark.properties", ctr.Args[i+1])
	switch b.app.Spec.Type {
	case v1beta2.SparkApplicationTypePython:
		assert.Equal(t, "org.apache.spark.deploy.PythonRunner", ctr.Args[i+3])
	case v1beta2.SparkApplicationTypeR:
		assert.Equal(t, "org.apache.spark.deploy.RRunner", ctr.Args[i+3])
	}
	if ctr.Args[0] == "driver" {
		tail := ctr.Args[len(ctr.Args)-len(b.app.Spec.Arguments):]
		assert.Equal(t, append([]string{}, b.app.Spec.Arguments...), append([]string{}, tail...))
		resource := "spark-internal" // a main class on the image's classpath, such as the Spark Connect server
		if f := b.app.Spec.MainApplicationFile; f != nil {
			resource = *f
		}
		assert.Equal(t, resource, ctr.Args[len(ctr.Args)-len(b.app.Spec.Arguments)-1])
	}

	bind := env(ctr, "SPARK_DRIVER_BIND_ADDRESS")
	require.NotNil(t, bind)
	require.NotNil(t, bind.ValueFrom)
	assert.Equal(t, "status.podIP", bind.ValueFrom.FieldRef.FieldPath)
	if e := env(ctr, "SPARK_CONF_DIR"); assert.NotNil(t, e) {
		assert.True(t, e.Value == "/opt/spark/conf" || b.app.Spec.SparkConfigMap != nil, "SPARK_CONF_DIR %s", e.Value)
	}
	if e := env(ctr, "SPARK_APPLICATION_ID"); assert.NotNil(t, e) {
		assert.Equal(t, appID, e.Value)
	}
	assert.NotNil(t, env(ctr, "SPARK_USER"))
	if e := env(ctr, "SPARK_LOCAL_DIRS"); assert.NotNil(t, e) {
		var dirs []string
		for _, m := range ctr.VolumeMounts {
			if strings.HasPrefix(m.Name, "spark-local-dir-") {
				dirs = append(dirs, m.MountPath)
			}
		}
		assert.NotEmpty(t, dirs)
		assert.Equal(t, strings.Join(dirs, ","), e.Value)
	}

	ports := map[string]int32{}
	for _, p := range ctr.Ports {
		ports[p.Name] = p.ContainerPort
	}
	assert.Equal(t, conf["spark.driver.port"], itoa(ports["driver-rpc-port"]))
	assert.Equal(t, conf["spark.driver.blockManager.port"], itoa(ports["blockmanager"]))
	assert.Contains(t, ports, "spark-ui")

	req, lim := ctr.Resources.Requests.Memory(), ctr.Resources.Limits.Memory()
	assert.True(t, strings.HasSuffix(req.String(), "Mi"), "memory request %s is in MiB", req)
	if b.app.Spec.Driver.MemoryLimit == nil {
		assert.True(t, req.Equal(*lim), "memory request %s = limit %s", req, lim)
	}
	heap, err := v1beta2.ParseSparkMemory(*b.app.Spec.Driver.Memory)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, req.Value(), heap+384*v1beta2.MiB, "heap plus at least the minimum overhead")
	assert.False(t, ctr.Resources.Requests.Cpu().IsZero())

	var confMounts int
	for _, m := range ctr.VolumeMounts {
		if m.MountPath == "/opt/spark/conf" {
			confMounts++
			vol := volume(t, pod, m.Name)
			require.NotNil(t, vol.ConfigMap)
			assert.Equal(t, b.objs.ConfigMap.Name, vol.ConfigMap.Name)
			require.Len(t, vol.ConfigMap.Items, 1)
			assert.Equal(t, "spark.properties", vol.ConfigMap.Items[0].Key)
			assert.Equal(t, int32(0o644), *vol.ConfigMap.Items[0].Mode)
		}
	}
	assert.Equal(t, 1, confMounts, "exactly one mount at /opt/spark/conf")
	for _, m := range ctr.VolumeMounts {
		assert.NotNil(t, volume(t, pod, m.Name), "mount %s has its volume", m.Name)
	}

	if sa := b.app.Spec.Driver.ServiceAccount; sa != nil {
		assert.Equal(t, *sa, pod.Spec.ServiceAccountName)
	}
	assert.False(t, pod.Spec.AutomountServiceAccountToken != nil && !*pod.Spec.AutomountServiceAccountToken,
		"the driver authenticates with its service account token")
	for _, s := range b.app.Spec.ImagePullSecrets {
		assert.Contains(t, pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	for k, v := range b.app.Spec.NodeSelector {
		assert.Equal(t, v, pod.Spec.NodeSelector[k])
	}
	if assert.NotNil(t, pod.Spec.EnableServiceLinks) {
		assert.False(t, *pod.Spec.EnableServiceLinks)
	}
}

func checkConfigMap(t *testing.T, b built) {
	cm, conf := b.objs.ConfigMap, b.conf
	for _, key := range []string{
		"spark.master", "spark.app.name", "spark.app.id", "spark.submit.deployMode",
		"spark.kubernetes.submitInDriver", "spark.kubernetes.driver.pod.name", "spark.kubernetes.namespace",
		"spark.kubernetes.container.image", "spark.driver.host", "spark.driver.port",
		"spark.driver.blockManager.port", "spark.kubernetes.resource.type", "spark.kubernetes.memoryOverheadFactor",
	} {
		assert.NotEmpty(t, conf[key], key)
	}
	if master := b.app.Spec.SparkConf["spark.master"]; v1beta2.StandaloneMaster(master) {
		assert.Equal(t, master, conf["spark.master"], "a standalone cluster's master is kept")
	} else {
		assert.True(t, strings.HasPrefix(conf["spark.master"], "k8s://https://"))
	}
	assert.Equal(t, "cluster", conf["spark.submit.deployMode"])
	assert.Equal(t, "true", conf["spark.kubernetes.submitInDriver"])
	assert.NotContains(t, conf, "spark.driver.bindAddress")
	jvm := b.app.Spec.Type == v1beta2.SparkApplicationTypeScala || b.app.Spec.Type == v1beta2.SparkApplicationTypeJava
	if f := b.app.Spec.MainApplicationFile; jvm && f != nil {
		assert.Contains(t, conf["spark.jars"], *f)
	}
	assert.True(t, *cm.Immutable)
	size := 0
	for k, v := range cm.Data {
		size += len(k) + len(v)
	}
	assert.Less(t, size, 1<<20)

	if path := conf["spark.kubernetes.executor.podTemplateFile"]; path != "" {
		assert.Equal(t, "/opt/spark/pod-template/pod-spec-template.yml", path)
		ctr := sparkContainer(t, b.objs.DriverPod)
		var mounted bool
		for _, m := range ctr.VolumeMounts {
			if m.MountPath == "/opt/spark/pod-template" {
				vol := volume(t, b.objs.DriverPod, m.Name)
				mounted = vol.ConfigMap != nil && vol.ConfigMap.Name == cm.Name &&
					len(vol.ConfigMap.Items) == 1 && vol.ConfigMap.Items[0].Path == "pod-spec-template.yml"
				var tmpl corev1.Pod
				require.NoError(t, json.Unmarshal([]byte(cm.Data[vol.ConfigMap.Items[0].Key]), &tmpl))
				assert.Equal(t, conf["spark.kubernetes.executor.podTemplateContainerName"], tmpl.Spec.Containers[0].Name)
			}
		}
		assert.True(t, mounted, "the executor template is mounted where podTemplateFile points")
	}
}

func checkService(t *testing.T, b built) {
	svc, pod := b.objs.DriverService, b.objs.DriverPod
	assert.Equal(t, corev1.ClusterIPNone, svc.Spec.ClusterIP)
	assert.Empty(t, validation.IsDNS1035Label(svc.Name))
	host := strings.Split(b.conf["spark.driver.host"], ".")
	assert.Equal(t, []string{svc.Name, pod.Namespace, "svc"}, host)
	for k, v := range svc.Spec.Selector {
		assert.Equal(t, v, pod.Labels[k], "selector %s is a label of the driver", k)
	}
	ports := map[string]int32{}
	for _, p := range svc.Spec.Ports {
		ports[p.Name] = p.Port
		assert.Equal(t, p.Port, p.TargetPort.IntVal)
	}
	assert.Equal(t, b.conf["spark.driver.port"], itoa(ports["driver-rpc-port"]))
	assert.Equal(t, b.conf["spark.driver.blockManager.port"], itoa(ports["blockmanager"]))
	assert.Contains(t, ports, "spark-ui")
	assert.Equal(t, b.conf["spark.app.id"], svc.Labels[sparkpod.LabelAppSelector])
}

func volume(t *testing.T, pod *corev1.Pod, name string) *corev1.Volume {
	t.Helper()
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == name {
			return &pod.Spec.Volumes[i]
		}
	}
	t.Errorf("no volume %s", name)
	return &corev1.Volume{}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
