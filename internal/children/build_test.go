package children

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// richApp sets most of the spec, with many map entries, so that any unsorted iteration shows.
func richApp(app *v1beta2.SparkApplication) {
	s := &app.Spec
	app.Labels = map[string]string{"team": "data", "cost-center": "42", "kueue.x-k8s.io/queue-name": "q"}
	s.Arguments = []string{"1000", "--verbose"}
	s.ImagePullSecrets = []string{"regcred", "regcred2"}
	s.Deps = v1beta2.Dependencies{Jars: []string{"local:///opt/a.jar"}, Files: []string{"s3a://b/f.txt"}}
	s.SparkConf = map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		s.SparkConf["spark.user."+k] = strings.Repeat(k, 3)
	}
	s.HadoopConf = map[string]string{"fs.s3a.endpoint": "minio:9000", "fs.s3a.path.style.access": "true"}
	s.NodeSelector = map[string]string{"pool": "spark", "zone": "a"}
	s.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "spark-local-dir-scratch", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/mnt/disk1"}}},
	}
	for _, ps := range []*v1beta2.SparkPodSpec{&s.Driver.SparkPodSpec, &s.Executor.SparkPodSpec} {
		ps.Labels = map[string]string{"l1": "1", "l2": "2", "l3": "3"}
		ps.Annotations = map[string]string{"a1": "1", "a2": "2", "a3": "3"}
		ps.EnvVars = map[string]string{"E1": "1", "E2": "2", "E3": "3", "E4": "4"}
		ps.Env = []corev1.EnvVar{{Name: "PLAIN", Value: "x"}}
		ps.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"S1": {Name: "s", Key: "k1"}, "S2": {Name: "s", Key: "k2"}, "S3": {Name: "s", Key: "k3"}}
		ps.Secrets = []v1beta2.SecretInfo{{Name: "gcp", Path: "/mnt/gcp", Type: v1beta2.SecretTypeGCPServiceAccount}, {Name: "generic", Path: "/mnt/g", Type: v1beta2.SecretTypeGeneric}}
		ps.ConfigMaps = []v1beta2.NamePath{{Name: "cm.one", Path: "/etc/one"}, {Name: "cm-two", Path: "/etc/two"}}
		ps.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "spark-local-dir-scratch", MountPath: "/scratch"}}
		ps.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		ps.Sidecars = []corev1.Container{{Name: "side", Image: "busybox"}}
	}
	s.Driver.ServiceLabels = map[string]string{"s1": "1", "s2": "2"}
	s.Driver.ServiceAnnotations = map[string]string{"sa1": "1", "sa2": "2"}
	s.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true, ExposeExecutorMetrics: true,
		Prometheus: &v1beta2.PrometheusSpec{JmxExporterJar: "/prometheus/jmx.jar"}}
	s.SparkUIOptions = &v1beta2.SparkUIConfiguration{ServiceLabels: map[string]string{"u1": "1", "u2": "2"}}
	s.DriverIngressOptions = []v1beta2.DriverIngressConfiguration{
		{ServicePort: ptr.To[int32](8888), ServicePortName: ptr.To("connect"), IngressURLFormat: "{{$appName}}.example.com"},
	}
	s.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](1), MaxExecutors: ptr.To[int32](5)}
}

var richOptions = Options{EnableUIService: true, IngressURLFormat: "ui.example.com/{{$appNamespace}}/{{$appName}}", IngressClassName: "nginx"}

func TestBuildIsDeterministic(t *testing.T) {
	for _, version := range []string{"3.5.5", "2.4.8"} {
		t.Run(version, func(t *testing.T) {
			app := newApp(richApp, withVersion(version))
			if version >= "3" {
				// Templates are copied before the builder changes them.
				for _, ps := range []*v1beta2.SparkPodSpec{&app.Spec.Driver.SparkPodSpec, &app.Spec.Executor.SparkPodSpec} {
					ps.Template = &corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"t": "1"}},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{
							Name: "main", Env: []corev1.EnvVar{{Name: "T", Value: "1"}},
						}}},
					}
				}
			}
			prepare(t, app)
			before := app.DeepCopy()
			first, err := Build(app, testSub, richOptions)
			require.NoError(t, err)
			want := coretest.MustJSON(t, first.List())
			for i := 0; i < 10; i++ {
				objs, err := Build(app, testSub, richOptions)
				require.NoError(t, err)
				require.True(t, bytes.Equal(want, coretest.MustJSON(t, objs.List())), "build %d differs", i)
				objs, err = Build(app.DeepCopy(), testSub, richOptions)
				require.NoError(t, err)
				require.True(t, bytes.Equal(want, coretest.MustJSON(t, objs.List())), "build %d of a copy differs", i)
			}
			assert.True(t, equality.Semantic.DeepEqual(before, app), "Build must not change its input")
			// Everything was built.
			assert.NotNil(t, first.MetricsConfig)
			assert.NotNil(t, first.UIService)
			assert.NotNil(t, first.UIIngress)
			assert.Len(t, first.PortServices, 1)
			assert.Len(t, first.PortIngresses, 1)
		})
	}
	// The objects depend on the submission.
	app := prepare(t, newApp(richApp))
	a, err := Build(app, NewSubmission("u", 1), richOptions)
	require.NoError(t, err)
	b, err := Build(app, NewSubmission("u", 2), richOptions)
	require.NoError(t, err)
	assert.NotEqual(t, a.ConfigMap.Name, b.ConfigMap.Name)
	assert.NotEqual(t, a.DriverPod.Labels[sparkpod.LabelAppSelector], b.DriverPod.Labels[sparkpod.LabelAppSelector])
	assert.Equal(t, a.DriverPod.Name, b.DriverPod.Name, "the pod name is the application's")
}

func TestBuildNilApp(t *testing.T) {
	objs, err := Build(nil, testSub, Options{})
	assert.Nil(t, objs)
	assert.Error(t, err)
}

func TestObjectsList(t *testing.T) {
	objs := build(t, newApp(richApp), richOptions)
	list := objs.List()
	want := []any{objs.DriverPod, objs.ConfigMap, objs.MetricsConfig, objs.DriverService, objs.UIService,
		objs.PortServices[0], objs.UIIngress, objs.PortIngresses[0]}
	require.Len(t, list, len(want))
	for i := range want {
		assert.Same(t, want[i], list[i], "item %d", i)
	}
	plain := build(t, newApp(), Options{})
	assert.Equal(t, []any{plain.DriverPod, plain.ConfigMap, plain.DriverService}, plain.List())
}

func TestDriverPodName(t *testing.T) {
	tests := []struct {
		name string
		app  *v1beta2.SparkApplication
		want string
	}{
		{"default", newApp(), "pi-driver"},
		{"sparkConf", newApp(withConf("spark.kubernetes.driver.pod.name", "from-conf")), "from-conf"},
		{"spec.driver.podName", newApp(func(a *v1beta2.SparkApplication) { a.Spec.Driver.PodName = ptr.To("typed") }), "typed"},
		{"spec.driver.podName wins over sparkConf", newApp(withConf("spark.kubernetes.driver.pod.name", "from-conf"),
			func(a *v1beta2.SparkApplication) { a.Spec.Driver.PodName = ptr.To("typed") }), "typed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, Options{})
			assert.Equal(t, tt.want, objs.DriverPod.Name)
			assert.Equal(t, testNamespace, objs.DriverPod.Namespace)
			// The driver finds its own Pod by this property.
			assert.Equal(t, tt.want, sparkProps(t, objs)["spark.kubernetes.driver.pod.name"])
		})
	}
}

func TestDriverPodBasics(t *testing.T) {
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) { a.Spec.Arguments = []string{"100"} }), Options{})
	pod := objs.DriverPod
	assert.Equal(t, "Pod", pod.Kind)
	assert.Equal(t, "v1", pod.APIVersion)
	assert.Equal(t, map[string]string{
		sparkpod.LabelAppSelector:  testSub.AppID,
		sparkpod.LabelSparkRole:    sparkpod.RoleDriver,
		sparkpod.LabelSparkVersion: "3.5.5",
		sparkpod.LabelSparkAppName: "pi",
		sparkpod.LabelAppName:      "pi",
		sparkpod.LabelLaunchedBy:   "true",
		sparkpod.LabelSubmissionID: testSub.SubmissionID,
	}, pod.Labels)
	assert.Empty(t, pod.Annotations)
	assert.Equal(t, corev1.RestartPolicyNever, pod.Spec.RestartPolicy)
	assert.Equal(t, ptr.To(false), pod.Spec.EnableServiceLinks)
	assert.Empty(t, pod.Spec.NodeSelector)
	assert.Empty(t, pod.Spec.ServiceAccountName)
	require.Len(t, pod.Spec.Containers, 1)

	ctr := driverContainer(t, objs)
	assert.Equal(t, testImage, ctr.Image)
	assert.Equal(t, corev1.PullIfNotPresent, ctr.ImagePullPolicy)
	assert.Empty(t, ctr.Command, "the image's entrypoint runs")
	assert.Equal(t, []string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", testMainClass, testJar, "100"}, ctr.Args)
	assert.Equal(t, []corev1.ContainerPort{
		{Name: "driver-rpc-port", ContainerPort: 7078, Protocol: corev1.ProtocolTCP},
		{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP},
		{Name: "spark-ui", ContainerPort: 4040, Protocol: corev1.ProtocolTCP},
	}, ctr.Ports)

	var names []string
	for _, e := range ctr.Env {
		names = append(names, e.Name)
	}
	assert.Equal(t, []string{"SPARK_USER", "SPARK_APPLICATION_ID", "SPARK_DRIVER_BIND_ADDRESS", "SPARK_LOCAL_DIRS", "SPARK_CONF_DIR"}, names)
	assert.Equal(t, "spark", envValue(t, ctr, "SPARK_USER"))
	assert.Equal(t, testSub.AppID, envValue(t, ctr, "SPARK_APPLICATION_ID"))
	assert.Equal(t, "/opt/spark/conf", envValue(t, ctr, "SPARK_CONF_DIR"))
	bind := findEnv(ctr.Env, "SPARK_DRIVER_BIND_ADDRESS")
	require.NotNil(t, bind.ValueFrom)
	assert.Equal(t, &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}, bind.ValueFrom.FieldRef)

	cpu := ctr.Resources.Requests[corev1.ResourceCPU]
	assert.Equal(t, "1", cpu.String())
	_, hasCPULimit := ctr.Resources.Limits[corev1.ResourceCPU]
	assert.False(t, hasCPULimit, "no CPU limit unless asked")

	// spark.properties is mounted where --properties-file points.
	assert.Equal(t, []string{podTemplateVolumeName, "spark-local-dir-1", confVolumeName}, volumeNames(pod.Spec.Volumes))
	conf := findVolume(pod.Spec.Volumes, confVolumeName)
	require.NotNil(t, conf.ConfigMap)
	assert.Equal(t, objs.ConfigMap.Name, conf.ConfigMap.Name)
	assert.Equal(t, []corev1.KeyToPath{{Key: "spark.properties", Path: "spark.properties", Mode: ptr.To[int32](0o644)}}, conf.ConfigMap.Items)
	assert.Equal(t, "/opt/spark/conf", findMount(ctr.VolumeMounts, confVolumeName).MountPath)

	props := sparkProps(t, objs)
	for k, want := range map[string]string{
		"spark.app.name":                                "pi",
		"spark.app.id":                                  testSub.AppID,
		"spark.master":                                  "k8s://https://kubernetes.default.svc:443",
		"spark.submit.deployMode":                       "cluster",
		"spark.kubernetes.namespace":                    "team-a",
		"spark.kubernetes.submitInDriver":               "true",
		"spark.kubernetes.driver.pod.name":              "pi-driver",
		"spark.driver.host":                             "pi-eb0f4b1c-driver-svc.team-a.svc",
		"spark.driver.port":                             "7078",
		"spark.driver.blockManager.port":                "7079",
		"spark.kubernetes.resource.type":                "java",
		"spark.jars":                                    testJar,
		"spark.kubernetes.container.image":              testImage,
		"spark.driver.cores":                            "1",
		"spark.driver.memory":                           "1g",
		"spark.executor.cores":                          "1",
		"spark.executor.memory":                         "1g",
		"spark.executor.instances":                      "1",
		"spark.kubernetes.submission.waitAppCompletion": "false",
		"spark.kubernetes.driver.label.sparkoperator.k8s.io/app-name":                   "pi",
		"spark.kubernetes.driver.label.sparkoperator.k8s.io/launched-by-spark-operator": "true",
		"spark.kubernetes.driver.label.sparkoperator.k8s.io/submission-id":              testSub.SubmissionID,
		"spark.kubernetes.executor.label.sparkoperator.k8s.io/app-name":                 "pi",
		"spark.kubernetes.executor.label.sparkoperator.k8s.io/submission-id":            testSub.SubmissionID,
	} {
		assert.Equal(t, want, props[k], k)
	}
	// The executors the driver creates match ExecutorSelector.
	for k, v := range ExecutorSelector(prepare(t, newApp())) {
		if k == sparkpod.LabelSparkRole {
			continue // Spark's own
		}
		assert.Equal(t, v, props["spark.kubernetes.executor.label."+k], k)
	}
}

func TestDriverPodSettings(t *testing.T) {
	app := newApp(func(a *v1beta2.SparkApplication) {
		s := &a.Spec
		a.Labels = map[string]string{"team": "data", "kueue.x-k8s.io/queue-name": "q", sparkpod.LabelSparkRole: "evil"}
		s.ImagePullPolicy = ptr.To("Always")
		s.ImagePullSecrets = []string{"regcred", "other"}
		s.NodeSelector = map[string]string{"pool": "spark"}
		s.Driver.Image = ptr.To("driver-image:1")
		s.Driver.ServiceAccount = ptr.To("spark-sa")
		s.Driver.Labels = map[string]string{"role-label": "x", sparkpod.LabelAppSelector: "evil", sparkpod.LabelSubmissionID: "evil"}
		s.Driver.Annotations = map[string]string{"note": "hello {{APP_ID}}"}
		s.Driver.EnvVars = map[string]string{"B_VAR": "2", "A_VAR": "1"}
		s.Driver.CoreRequest = ptr.To("500m")
		s.Driver.CoreLimit = ptr.To("1500m")
		s.Driver.GPU = &v1beta2.GPUSpec{Name: "nvidia.com/gpu", Quantity: 2}
		s.Driver.PriorityClassName = ptr.To("high")
		s.Driver.Tolerations = []corev1.Toleration{{Key: "driver-only", Operator: corev1.TolerationOpExists}}
	})
	objs := build(t, app, Options{})
	pod := objs.DriverPod
	ctr := driverContainer(t, objs)

	assert.Equal(t, "data", pod.Labels["team"])
	assert.NotContains(t, pod.Labels, "kueue.x-k8s.io/queue-name", "Kueue must not manage the driver on its own")
	assert.Equal(t, "x", pod.Labels["role-label"])
	assert.Equal(t, sparkpod.RoleDriver, pod.Labels[sparkpod.LabelSparkRole])
	assert.Equal(t, testSub.AppID, pod.Labels[sparkpod.LabelAppSelector])
	assert.Equal(t, testSub.SubmissionID, pod.Labels[sparkpod.LabelSubmissionID])
	assert.Equal(t, "hello "+testSub.AppID, pod.Annotations["note"], "{{APP_ID}} is substituted in annotations")

	assert.Equal(t, "driver-image:1", ctr.Image)
	assert.Equal(t, corev1.PullAlways, ctr.ImagePullPolicy)
	assert.Equal(t, []corev1.LocalObjectReference{{Name: "regcred"}, {Name: "other"}}, pod.Spec.ImagePullSecrets)
	assert.Equal(t, map[string]string{"pool": "spark"}, pod.Spec.NodeSelector)
	assert.Equal(t, "spark-sa", pod.Spec.ServiceAccountName)
	assert.Equal(t, "high", pod.Spec.PriorityClassName)
	assert.Equal(t, []corev1.Toleration{{Key: "driver-only", Operator: corev1.TolerationOpExists}}, pod.Spec.Tolerations)
	assert.Equal(t, "1", envValue(t, ctr, "A_VAR"))
	assert.Equal(t, "2", envValue(t, ctr, "B_VAR"))

	assert.Zero(t, ctr.Resources.Requests.Cpu().Cmp(resource.MustParse("500m")), ctr.Resources.Requests.Cpu().String())
	assert.Zero(t, ctr.Resources.Limits.Cpu().Cmp(resource.MustParse("1500m")), ctr.Resources.Limits.Cpu().String())
	gpu := ctr.Resources.Limits["nvidia.com/gpu"]
	assert.Equal(t, int64(2), gpu.Value())

	props := sparkProps(t, objs)
	assert.Equal(t, "driver-image:1", props["spark.kubernetes.driver.container.image"])
	assert.Equal(t, "spark-sa", props["spark.kubernetes.authenticate.driver.serviceAccountName"])
	assert.Equal(t, "spark", props["spark.kubernetes.node.selector.pool"])
	assert.Equal(t, "regcred,other", props["spark.kubernetes.container.image.pullSecrets"])
	assert.Equal(t, "500m", props["spark.kubernetes.driver.request.cores"])
	assert.Equal(t, "1500m", props["spark.kubernetes.driver.limit.cores"])
	assert.NotContains(t, props, "spark.kubernetes.driver.label.kueue.x-k8s.io/queue-name")
	assert.NotContains(t, props, "spark.kubernetes.driver.label."+sparkpod.LabelSparkRole, "Spark refuses a preset label key")
	assert.NotContains(t, props, "spark.kubernetes.driver.label."+sparkpod.LabelAppSelector)
	assert.Equal(t, testSub.SubmissionID, props["spark.kubernetes.driver.label."+sparkpod.LabelSubmissionID])
}

func TestDriverCustomResources(t *testing.T) {
	objs := build(t, newApp(withConf(
		"spark.driver.resource.gpu.amount", "1",
		"spark.driver.resource.gpu.vendor", "nvidia.com",
		"spark.driver.resource.gpu.discoveryScript", "/opt/gpu.sh",
	)), Options{})
	q := driverContainer(t, objs).Resources.Limits["nvidia.com/gpu"]
	assert.Equal(t, "1", q.String())

	be := buildErr(t, newApp(withConf("spark.driver.resource.gpu.amount", "1")), Options{})
	assert.Contains(t, be.Error(), "spark.driver.resource.gpu.vendor")
}

func TestDriverArgs(t *testing.T) {
	python := func(a *v1beta2.SparkApplication) {
		pythonApp(a)
		a.Spec.Arguments = []string{"10"}
	}
	r := func(a *v1beta2.SparkApplication) {
		a.Spec.Type = v1beta2.SparkApplicationTypeR
		a.Spec.MainClass = nil
		a.Spec.MainApplicationFile = ptr.To(testRFile)
	}
	const pf = "/opt/spark/conf/spark.properties"
	tests := []struct {
		name         string
		app          *v1beta2.SparkApplication
		want         []string
		wantEnv      map[string]string // plain env that must be present
		wantNoEnv    []string
		resourceType string
	}{
		{
			name: "Scala with mainClass and arguments",
			app:  newApp(func(a *v1beta2.SparkApplication) { a.Spec.Arguments = []string{"100", "--flag=x y"} }),
			want: []string{"driver", "--properties-file", pf, "--class", testMainClass, testJar, "100", "--flag=x y"},
		},
		{
			name: "Java without mainClass reads the jar's manifest",
			app: newApp(func(a *v1beta2.SparkApplication) {
				a.Spec.Type = v1beta2.SparkApplicationTypeJava
				a.Spec.MainClass = nil
			}),
			want: []string{"driver", "--properties-file", pf, testJar},
		},
		{
			name: "Java with mainClass and no file",
			app: newApp(func(a *v1beta2.SparkApplication) {
				a.Spec.Type = v1beta2.SparkApplicationTypeJava
				a.Spec.MainApplicationFile = nil
			}),
			want: []string{"driver", "--properties-file", pf, "--class", testMainClass, "spark-internal"},
		},
		{
			name:         "Python",
			app:          newApp(python),
			want:         []string{"driver", "--properties-file", pf, "--class", "org.apache.spark.deploy.PythonRunner", testPyFile, "10"},
			wantNoEnv:    []string{"PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "PYSPARK_PRIMARY", "PYSPARK_MAJOR_PYTHON_VERSION"},
			resourceType: "python",
		},
		{
			name:         "Python with spark.pyspark.python",
			app:          newApp(python, withConf("spark.pyspark.python", "python3.11")),
			want:         []string{"driver", "--properties-file", pf, "--class", "org.apache.spark.deploy.PythonRunner", testPyFile, "10"},
			wantEnv:      map[string]string{"PYSPARK_PYTHON": "python3.11", "PYSPARK_DRIVER_PYTHON": "python3.11"},
			resourceType: "python",
		},
		{
			name:         "Python with a driver interpreter of its own",
			app:          newApp(python, withConf("spark.pyspark.python", "python3.11", "spark.pyspark.driver.python", "/usr/bin/python3")),
			want:         []string{"driver", "--properties-file", pf, "--class", "org.apache.spark.deploy.PythonRunner", testPyFile, "10"},
			wantEnv:      map[string]string{"PYSPARK_PYTHON": "python3.11", "PYSPARK_DRIVER_PYTHON": "/usr/bin/python3"},
			resourceType: "python",
		},
		{
			name:         "Python on 3.1 uses the driver mode",
			app:          newApp(python, withVersion("3.1.3")),
			want:         []string{"driver", "--properties-file", pf, "--class", "org.apache.spark.deploy.PythonRunner", testPyFile, "10"},
			wantNoEnv:    []string{"PYSPARK_PRIMARY", "PYSPARK_MAJOR_PYTHON_VERSION", "PYSPARK_APP_ARGS"},
			resourceType: "python",
		},
		{
			name:         "R",
			app:          newApp(r, func(a *v1beta2.SparkApplication) { a.Spec.Arguments = []string{"x"} }),
			want:         []string{"driver", "--properties-file", pf, "--class", "org.apache.spark.deploy.RRunner", testRFile, "x"},
			wantNoEnv:    []string{"R_PRIMARY"},
			resourceType: "r",
		},
		{
			name: "proxyUser",
			app:  newApp(func(a *v1beta2.SparkApplication) { a.Spec.ProxyUser = ptr.To("alice") }),
			want: []string{"driver", "--proxy-user", "alice", "--properties-file", pf, "--class", testMainClass, testJar},
		},
		{
			name: "Spark 2.4 Python",
			app: newApp(python, withVersion("2.4.8"), func(a *v1beta2.SparkApplication) {
				a.Spec.Arguments = []string{"10", "--verbose"}
				a.Spec.Deps.PyFiles = []string{"local:///opt/deps/a.py", "s3a://bucket/b.zip"}
			}),
			want: []string{"driver-py", "--properties-file", pf, "--class", "org.apache.spark.deploy.PythonRunner"},
			wantEnv: map[string]string{
				"PYSPARK_PRIMARY":              "/opt/spark/examples/src/main/python/pi.py",
				"PYSPARK_MAJOR_PYTHON_VERSION": "2",
				"PYSPARK_FILES":                "/opt/deps/a.py:s3a://bucket/b.zip",
				"PYSPARK_APP_ARGS":             "10 --verbose",
			},
			resourceType: "python",
		},
		{
			name: "Spark 2.4 Python 3 without arguments or files",
			app: newApp(python, withVersion("2.4.8"), func(a *v1beta2.SparkApplication) {
				a.Spec.Arguments = nil
				a.Spec.PythonVersion = ptr.To("3")
			}),
			want:         []string{"driver-py", "--properties-file", pf, "--class", "org.apache.spark.deploy.PythonRunner"},
			wantEnv:      map[string]string{"PYSPARK_PRIMARY": "/opt/spark/examples/src/main/python/pi.py", "PYSPARK_MAJOR_PYTHON_VERSION": "3"},
			wantNoEnv:    []string{"PYSPARK_FILES", "PYSPARK_APP_ARGS"},
			resourceType: "python",
		},
		{
			name:         "Spark 2.4 R",
			app:          newApp(r, withVersion("2.4.8"), func(a *v1beta2.SparkApplication) { a.Spec.Arguments = []string{"a", "b"} }),
			want:         []string{"driver-r", "--properties-file", pf, "--class", "org.apache.spark.deploy.RRunner"},
			wantEnv:      map[string]string{"R_PRIMARY": "/opt/spark/examples/src/main/r/dataframe.R", "R_APP_ARGS": "a b"},
			resourceType: "r",
		},
		{
			name: "Spark 2.4 Scala is unchanged",
			app:  newApp(withVersion("2.4.8")),
			want: []string{"driver", "--properties-file", pf, "--class", testMainClass, testJar},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, Options{})
			ctr := driverContainer(t, objs)
			assert.Equal(t, tt.want, ctr.Args)
			for name, want := range tt.wantEnv {
				assert.Equal(t, want, envValue(t, ctr, name), name)
			}
			for _, name := range tt.wantNoEnv {
				assert.Nil(t, findEnv(ctr.Env, name), name)
			}
			props := sparkProps(t, objs)
			wantType := tt.resourceType
			switch {
			case wantType != "":
				assert.NotContains(t, props, "spark.jars", "only a JVM primary resource goes to spark.jars")
			case tt.app.Spec.MainApplicationFile != nil:
				wantType = "java"
				assert.Equal(t, testJar, props["spark.jars"], "the primary jar travels in spark.jars")
			default:
				wantType = "java"
				assert.NotContains(t, props, "spark.jars")
			}
			assert.Equal(t, wantType, props["spark.kubernetes.resource.type"])
		})
	}
}

func TestDependencies(t *testing.T) {
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Deps = v1beta2.Dependencies{
			Jars:            []string{"local:///opt/a.jar", "s3a://b/c.jar"},
			Files:           []string{"s3a://b/f.txt"},
			Packages:        []string{"org.apache.hadoop:hadoop-aws:3.3.4", "com.x:y:1"},
			ExcludePackages: []string{"com.z:w"},
			Repositories:    []string{"https://repo.example.com"},
			Archives:        []string{"s3a://b/env.tar.gz#env"},
		}
	}), Options{})
	props := sparkProps(t, objs)
	assert.Equal(t, "local:///opt/a.jar,s3a://b/c.jar,"+testJar, props["spark.jars"])
	assert.Equal(t, "s3a://b/f.txt", props["spark.files"])
	assert.Equal(t, "org.apache.hadoop:hadoop-aws:3.3.4,com.x:y:1", props["spark.jars.packages"])
	assert.Equal(t, "com.z:w", props["spark.jars.excludes"])
	assert.Equal(t, "https://repo.example.com", props["spark.jars.repositories"])
	assert.Equal(t, "s3a://b/env.tar.gz#env", props["spark.archives"])

	py := sparkProps(t, build(t, newApp(pythonApp, func(a *v1beta2.SparkApplication) {
		a.Spec.Deps.PyFiles = []string{"local:///opt/a.py", "s3a://b/c.zip"}
	}), Options{}))
	assert.Equal(t, "local:///opt/a.py,s3a://b/c.zip", py["spark.submit.pyFiles"])
	assert.NotContains(t, py, "spark.jars")
}

func TestSecrets(t *testing.T) {
	secrets := []v1beta2.SecretInfo{
		{Name: "gcp-key", Path: "/mnt/gcp", Type: v1beta2.SecretTypeGCPServiceAccount},
		{Name: "hadoop-token", Path: "/mnt/hadoop", Type: v1beta2.SecretTypeHadoopDelegationToken},
		{Name: "plain", Path: "/mnt/plain", Type: v1beta2.SecretTypeGeneric},
	}
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.Secrets = secrets
		a.Spec.Executor.Secrets = secrets
	}), Options{})
	props := sparkProps(t, objs)
	pod := objs.DriverPod
	ctr := driverContainer(t, objs)
	for _, s := range secrets {
		assert.Equal(t, s.Path, props["spark.kubernetes.driver.secrets."+s.Name], s.Name)
		assert.Equal(t, s.Path, props["spark.kubernetes.executor.secrets."+s.Name], s.Name)
		vol := findVolume(pod.Spec.Volumes, s.Name+"-volume")
		require.NotNil(t, vol, s.Name)
		require.NotNil(t, vol.Secret, s.Name)
		assert.Equal(t, s.Name, vol.Secret.SecretName)
		m := findMount(ctr.VolumeMounts, s.Name+"-volume")
		require.NotNil(t, m, s.Name)
		assert.Equal(t, s.Path, m.MountPath)
	}
	assert.Equal(t, "/mnt/gcp/key.json", envValue(t, ctr, "GOOGLE_APPLICATION_CREDENTIALS"))
	assert.Equal(t, "/mnt/hadoop/hadoop.token", envValue(t, ctr, "HADOOP_TOKEN_FILE_LOCATION"))
	assert.Equal(t, "/mnt/gcp/key.json", props["spark.kubernetes.driverEnv.GOOGLE_APPLICATION_CREDENTIALS"])
	assert.Equal(t, "/mnt/hadoop/hadoop.token", props["spark.kubernetes.driverEnv.HADOOP_TOKEN_FILE_LOCATION"])
	assert.Equal(t, "/mnt/gcp/key.json", props["spark.executorEnv.GOOGLE_APPLICATION_CREDENTIALS"])
	assert.Equal(t, "/mnt/hadoop/hadoop.token", props["spark.executorEnv.HADOOP_TOKEN_FILE_LOCATION"])
	assert.Len(t, keysWithPrefix(props, "spark.kubernetes.driverEnv."), 2, "a Generic secret adds no env")

	// Spark mounts the executors' secrets from the properties: a copy in the template would
	// be a duplicate volume.
	tmpl := executorTemplatePod(t, objs)
	for _, s := range secrets {
		assert.Nil(t, findVolume(tmpl.Spec.Volumes, s.Name+"-volume"), s.Name)
	}
}

func TestEnvSecretKeyRefs(t *testing.T) {
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.EnvSecretKeyRefs = map[string]v1beta2.NameKey{
			"DB_PASSWORD": {Name: "db-creds", Key: "password"},
			"API_TOKEN":   {Name: "api", Key: "token.txt"},
		}
		a.Spec.Executor.EnvSecretKeyRefs = map[string]v1beta2.NameKey{"DB_PASSWORD": {Name: "db-creds", Key: "password"}}
	}), Options{})
	ctr := driverContainer(t, objs)
	for env, ref := range map[string][2]string{"DB_PASSWORD": {"db-creds", "password"}, "API_TOKEN": {"api", "token.txt"}} {
		e := findEnv(ctr.Env, env)
		require.NotNil(t, e, env)
		require.NotNil(t, e.ValueFrom, env)
		assert.Equal(t, &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: ref[0]}, Key: ref[1]}, e.ValueFrom.SecretKeyRef, env)
		assert.Empty(t, e.Value)
	}
	// Sorted, as the properties they come from have no order.
	assert.Less(t, indexOfEnv(ctr.Env, "API_TOKEN"), indexOfEnv(ctr.Env, "DB_PASSWORD"))
	props := sparkProps(t, objs)
	assert.Equal(t, "db-creds:password", props["spark.kubernetes.driver.secretKeyRef.DB_PASSWORD"])
	assert.Equal(t, "api:token.txt", props["spark.kubernetes.driver.secretKeyRef.API_TOKEN"])
	assert.Equal(t, "db-creds:password", props["spark.kubernetes.executor.secretKeyRef.DB_PASSWORD"])
	assert.Nil(t, findEnv(namedContainer(t, executorTemplatePod(t, objs), sparkpod.ExecutorContainerName).Env, "DB_PASSWORD"),
		"Spark adds the executors' secret env itself")
}

func indexOfEnv(env []corev1.EnvVar, name string) int {
	for i, e := range env {
		if e.Name == name {
			return i
		}
	}
	return -1
}

var localDirPattern = regexp.MustCompile(`^/var/data/spark-[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestLocalDirsDefault(t *testing.T) {
	objs := build(t, newApp(), Options{})
	ctr := driverContainer(t, objs)
	vol := findVolume(objs.DriverPod.Spec.Volumes, "spark-local-dir-1")
	require.NotNil(t, vol)
	assert.Equal(t, &corev1.EmptyDirVolumeSource{}, vol.EmptyDir)
	m := findMount(ctr.VolumeMounts, "spark-local-dir-1")
	require.NotNil(t, m)
	assert.Regexp(t, localDirPattern, m.MountPath)
	assert.Equal(t, m.MountPath, envValue(t, ctr, "SPARK_LOCAL_DIRS"))
	assert.Nil(t, findVolume(objs.DriverPod.Spec.Volumes, "spark-local-dir-2"))

	// Another attempt, another directory; the same attempt, the same.
	other, err := Build(prepare(t, newApp()), NewSubmission("x", 2), Options{})
	require.NoError(t, err)
	assert.NotEqual(t, m.MountPath, envValue(t, driverContainer(t, other), "SPARK_LOCAL_DIRS"))
	assert.Equal(t, m.MountPath, envValue(t, driverContainer(t, build(t, newApp(), Options{})), "SPARK_LOCAL_DIRS"))
}

func TestLocalDirsFromConf(t *testing.T) {
	tests := []struct {
		name       string
		conf       []string
		wantDirs   []string
		wantMedium corev1.StorageMedium
	}{
		{"spark.local.dir list", []string{"spark.local.dir", "/tmp/a, /tmp/b,"}, []string{"/tmp/a", "/tmp/b"}, corev1.StorageMediumDefault},
		{"tmpfs", []string{"spark.kubernetes.local.dirs.tmpfs", "true", "spark.local.dir", "/tmp/a"}, []string{"/tmp/a"}, corev1.StorageMediumMemory},
		{"tmpfs off", []string{"spark.kubernetes.local.dirs.tmpfs", "false", "spark.local.dir", "/tmp/a"}, []string{"/tmp/a"}, corev1.StorageMediumDefault},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, newApp(withConf(tt.conf...)), Options{})
			ctr := driverContainer(t, objs)
			for i, dir := range tt.wantDirs {
				name := "spark-local-dir-" + string(rune('1'+i))
				vol := findVolume(objs.DriverPod.Spec.Volumes, name)
				require.NotNil(t, vol, name)
				require.NotNil(t, vol.EmptyDir, name)
				assert.Equal(t, tt.wantMedium, vol.EmptyDir.Medium)
				assert.Equal(t, dir, findMount(ctr.VolumeMounts, name).MountPath)
			}
			assert.Nil(t, findVolume(objs.DriverPod.Spec.Volumes, "spark-local-dir-"+string(rune('1'+len(tt.wantDirs)))))
			assert.Equal(t, strings.Join(tt.wantDirs, ","), envValue(t, ctr, "SPARK_LOCAL_DIRS"))
		})
	}
}

func TestLocalDirsFromVolumes(t *testing.T) {
	sizeLimit := resource.MustParse("1Gi")
	app := newApp(func(a *v1beta2.SparkApplication) {
		s := &a.Spec
		s.Volumes = []corev1.Volume{
			{Name: "spark-local-dir-scratch", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: "/mnt/disk1", Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}},
			{Name: "spark-local-dir-claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
				ClaimName: "scratch-claim"}}},
			{Name: "spark-local-dir-mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				Medium: corev1.StorageMediumMemory, SizeLimit: &sizeLimit}}},
			{Name: "spark-local-dir-nfs", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{
				Server: "nfs.example.com", Path: "/exports/spark", ReadOnly: true}}},
			{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		}
		s.Driver.VolumeMounts = []corev1.VolumeMount{
			{Name: "spark-local-dir-scratch", MountPath: "/scratch"},
			{Name: "spark-local-dir-claim", MountPath: "/claim", SubPath: "driver"},
		}
		s.Executor.VolumeMounts = []corev1.VolumeMount{
			{Name: "spark-local-dir-scratch", MountPath: "/scratch"},
			{Name: "spark-local-dir-mem", MountPath: "/mem"},
			{Name: "spark-local-dir-nfs", MountPath: "/nfs", ReadOnly: true},
			{Name: "data", MountPath: "/data"},
		}
	})
	objs := build(t, app, Options{})
	props := sparkProps(t, objs)

	driverVolumes := map[string]string{}
	for _, k := range keysWithPrefix(props, "spark.kubernetes.driver.volumes.") {
		driverVolumes[k] = props[k]
	}
	assert.Equal(t, map[string]string{
		"spark.kubernetes.driver.volumes.hostPath.spark-local-dir-scratch.mount.path":                   "/scratch",
		"spark.kubernetes.driver.volumes.hostPath.spark-local-dir-scratch.options.path":                 "/mnt/disk1",
		"spark.kubernetes.driver.volumes.hostPath.spark-local-dir-scratch.options.type":                 "DirectoryOrCreate",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.spark-local-dir-claim.mount.path":        "/claim",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.spark-local-dir-claim.mount.subPath":     "driver",
		"spark.kubernetes.driver.volumes.persistentVolumeClaim.spark-local-dir-claim.options.claimName": "scratch-claim",
	}, driverVolumes)

	executorVolumes := map[string]string{}
	for _, k := range keysWithPrefix(props, "spark.kubernetes.executor.volumes.") {
		executorVolumes[k] = props[k]
	}
	assert.Equal(t, map[string]string{
		"spark.kubernetes.executor.volumes.hostPath.spark-local-dir-scratch.mount.path":    "/scratch",
		"spark.kubernetes.executor.volumes.hostPath.spark-local-dir-scratch.options.path":  "/mnt/disk1",
		"spark.kubernetes.executor.volumes.hostPath.spark-local-dir-scratch.options.type":  "DirectoryOrCreate",
		"spark.kubernetes.executor.volumes.emptyDir.spark-local-dir-mem.mount.path":        "/mem",
		"spark.kubernetes.executor.volumes.emptyDir.spark-local-dir-mem.options.medium":    "Memory",
		"spark.kubernetes.executor.volumes.emptyDir.spark-local-dir-mem.options.sizeLimit": "1Gi",
		"spark.kubernetes.executor.volumes.nfs.spark-local-dir-nfs.mount.path":             "/nfs",
		"spark.kubernetes.executor.volumes.nfs.spark-local-dir-nfs.mount.readOnly":         "true",
		"spark.kubernetes.executor.volumes.nfs.spark-local-dir-nfs.options.path":           "/exports/spark",
		"spark.kubernetes.executor.volumes.nfs.spark-local-dir-nfs.options.server":         "nfs.example.com",
		"spark.kubernetes.executor.volumes.nfs.spark-local-dir-nfs.options.readOnly":       "true",
	}, executorVolumes)

	// The driver uses the user's directories instead of an emptyDir of its own.
	pod := objs.DriverPod
	ctr := driverContainer(t, objs)
	assert.Nil(t, findVolume(pod.Spec.Volumes, "spark-local-dir-1"))
	scratch := findVolume(pod.Spec.Volumes, "spark-local-dir-scratch")
	require.NotNil(t, scratch)
	require.NotNil(t, scratch.HostPath)
	assert.Equal(t, "/mnt/disk1", scratch.HostPath.Path)
	claim := findVolume(pod.Spec.Volumes, "spark-local-dir-claim")
	require.NotNil(t, claim)
	assert.Equal(t, "scratch-claim", claim.PersistentVolumeClaim.ClaimName)
	assert.Equal(t, "driver", findMount(ctr.VolumeMounts, "spark-local-dir-claim").SubPath)
	assert.Equal(t, "/scratch,/claim", envValue(t, ctr, "SPARK_LOCAL_DIRS"))
	assert.Nil(t, findVolume(pod.Spec.Volumes, "spark-local-dir-mem"), "an executor-only volume")
	assert.Nil(t, findVolume(pod.Spec.Volumes, "data"), "an executor-only volume")

	// Spark mounts the executors' local directories from the properties; the template has the rest.
	tmpl := executorTemplatePod(t, objs)
	assert.Equal(t, []string{"data"}, volumeNames(tmpl.Spec.Volumes))
	assert.Equal(t, []string{"data"}, mountNames(namedContainer(t, tmpl, sparkpod.ExecutorContainerName).VolumeMounts))
}

func TestLocalDirVolumeOfUnsupportedKind(t *testing.T) {
	app := newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Volumes = []corev1.Volume{{Name: "spark-local-dir-cm", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}}}
		a.Spec.Executor.VolumeMounts = []corev1.VolumeMount{{Name: "spark-local-dir-cm", MountPath: "/x"}}
	})
	require.Empty(t, v1beta2.ValidateSparkApplication(app))
	be := buildErr(t, app, Options{})
	assert.Contains(t, be.Error(), "spark-local-dir-cm")
	assert.Contains(t, be.Error(), "emptyDir, hostPath, nfs or persistentVolumeClaim")
}

// executorCustomizations sets executor (and distinct driver) customizations.
func executorCustomizations(a *v1beta2.SparkApplication) {
	s := &a.Spec
	s.Volumes = []corev1.Volume{
		{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "spark-local-dir-x", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	e := &s.Executor
	e.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "spark", Effect: corev1.TaintEffectNoSchedule}}
	e.Affinity = testAffinity()
	e.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "spark-local-dir-x", MountPath: "/x"}}
	e.Sidecars = []corev1.Container{{Name: "log-shipper", Image: "fluent-bit:3"}}
	e.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	e.Env = []corev1.EnvVar{{Name: "EXEC_ENV", Value: "1"}}
	e.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true)}
	e.PodSecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](185)}
	e.NodeSelector = map[string]string{"disk": "ssd"}
	e.ConfigMaps = []v1beta2.NamePath{{Name: "exec.conf", Path: "/etc/exec"}}
	e.Ports = []v1beta2.Port{{Name: "debug", Protocol: "TCP", ContainerPort: 5005}}
	e.PriorityClassName = ptr.To("batch")
	e.TerminationGracePeriodSeconds = ptr.To[int64](60)

	d := &s.Driver
	d.Tolerations = []corev1.Toleration{{Key: "driver-only", Operator: corev1.TolerationOpExists}}
	d.Env = []corev1.EnvVar{{Name: "DRIVER_ENV", Value: "1"}}
}

func testAffinity() *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"spark"}}},
		}}},
	}}
}

func TestExecutorTemplate(t *testing.T) {
	objs := build(t, newApp(executorCustomizations), Options{})
	props := sparkProps(t, objs)
	tmpl := executorTemplatePod(t, objs)

	assert.Equal(t, "Pod", tmpl.Kind)
	assert.Empty(t, tmpl.Labels, "Spark sets the executors' labels; the merge's role label must not stay")
	require.Len(t, tmpl.Spec.Containers, 2)
	ctr := tmpl.Spec.Containers[0]
	assert.Equal(t, sparkpod.ExecutorContainerName, ctr.Name)
	assert.Equal(t, "log-shipper", tmpl.Spec.Containers[1].Name)
	assert.Equal(t, []string{"init"}, []string{tmpl.Spec.InitContainers[0].Name})
	assert.Equal(t, []corev1.EnvVar{{Name: "EXEC_ENV", Value: "1"}}, ctr.Env)
	assert.Equal(t, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true)}, ctr.SecurityContext)
	assert.Equal(t, []corev1.ContainerPort{{Name: "debug", ContainerPort: 5005, Protocol: corev1.ProtocolTCP}}, ctr.Ports)
	assert.Equal(t, []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "spark", Effect: corev1.TaintEffectNoSchedule}}, tmpl.Spec.Tolerations)
	assert.Equal(t, testAffinity(), tmpl.Spec.Affinity)
	assert.Equal(t, &corev1.PodSecurityContext{FSGroup: ptr.To[int64](185)}, tmpl.Spec.SecurityContext)
	assert.Equal(t, map[string]string{"disk": "ssd"}, tmpl.Spec.NodeSelector)
	assert.Equal(t, "batch", tmpl.Spec.PriorityClassName)
	assert.Equal(t, ptr.To[int64](60), tmpl.Spec.TerminationGracePeriodSeconds)
	cmVol := configMapVolumeName("exec.conf")
	assert.Equal(t, []string{cmVol, "data"}, volumeNames(tmpl.Spec.Volumes), "no spark-local-dir-* volume: Spark adds it")
	assert.Equal(t, []string{cmVol, "data"}, mountNames(ctr.VolumeMounts))
	assert.Equal(t, "exec.conf", findVolume(tmpl.Spec.Volumes, cmVol).ConfigMap.Name)
	assert.Empty(t, ctr.Resources.Limits, "Spark sets resources")

	// The driver has its own customizations and none of the executors'.
	dpod := objs.DriverPod
	dctr := driverContainer(t, objs)
	assert.Equal(t, []corev1.Toleration{{Key: "driver-only", Operator: corev1.TolerationOpExists}}, dpod.Spec.Tolerations)
	assert.Equal(t, "1", envValue(t, dctr, "DRIVER_ENV"))
	assert.Nil(t, findEnv(dctr.Env, "EXEC_ENV"))
	assert.Nil(t, dpod.Spec.Affinity)
	assert.Len(t, dpod.Spec.Containers, 1)
	assert.Nil(t, findVolume(dpod.Spec.Volumes, "data"))

	// The driver reads the template from where the properties say.
	assert.Equal(t, "/opt/spark/pod-template/pod-spec-template.yml", props["spark.kubernetes.executor.podTemplateFile"])
	assert.Equal(t, sparkpod.ExecutorContainerName, props["spark.kubernetes.executor.podTemplateContainerName"])
	vol := findVolume(dpod.Spec.Volumes, podTemplateVolumeName)
	require.NotNil(t, vol)
	require.NotNil(t, vol.ConfigMap)
	assert.Equal(t, objs.ConfigMap.Name, vol.ConfigMap.Name)
	require.Len(t, vol.ConfigMap.Items, 1)
	item := vol.ConfigMap.Items[0]
	assert.Equal(t, executorTemplateKey, item.Key)
	mount := findMount(dctr.VolumeMounts, podTemplateVolumeName)
	require.NotNil(t, mount)
	assert.Equal(t, props["spark.kubernetes.executor.podTemplateFile"], mount.MountPath+"/"+item.Path)

	assert.NotContains(t, props, "spark.kubernetes.executor.annotation.sparkoperator.k8s.io/pod-customization",
		"the template carries everything without a memory limit")
}

func TestExecutorTemplateFromUserTemplate(t *testing.T) {
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Executor.Template = &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "x"}, Annotations: map[string]string{"note": "y"}},
			Spec: corev1.PodSpec{
				Containers:  []corev1.Container{{Name: sparkpod.ExecutorContainerName, Env: []corev1.EnvVar{{Name: "FROM_TEMPLATE", Value: "1"}}}},
				Tolerations: []corev1.Toleration{{Key: "from-template", Operator: corev1.TolerationOpExists}},
			},
		}
		a.Spec.Executor.Tolerations = []corev1.Toleration{{Key: "from-spec", Operator: corev1.TolerationOpExists}}
		a.Spec.Executor.Env = []corev1.EnvVar{{Name: "FROM_SPEC", Value: "2"}}
	}), Options{})
	tmpl := executorTemplatePod(t, objs)
	assert.Equal(t, map[string]string{"team": "x"}, tmpl.Labels)
	assert.Equal(t, map[string]string{"note": "y"}, tmpl.Annotations)
	assert.Equal(t, []corev1.Toleration{
		{Key: "from-template", Operator: corev1.TolerationOpExists},
		{Key: "from-spec", Operator: corev1.TolerationOpExists},
	}, tmpl.Spec.Tolerations)
	require.Len(t, tmpl.Spec.Containers, 1)
	assert.Equal(t, []corev1.EnvVar{{Name: "FROM_TEMPLATE", Value: "1"}, {Name: "FROM_SPEC", Value: "2"}}, tmpl.Spec.Containers[0].Env)
}

func TestExecutorCustomizationOnSpark24(t *testing.T) {
	objs := build(t, newApp(withVersion("2.4.8"), executorCustomizations, func(a *v1beta2.SparkApplication) {
		a.Spec.Executor.MemoryLimit = ptr.To("4g")
	}), Options{})
	props := sparkProps(t, objs)
	assert.NotContains(t, objs.ConfigMap.Data, executorTemplateKey, "Spark 2.4 has no executor pod templates")
	assert.NotContains(t, props, "spark.kubernetes.executor.podTemplateFile")
	assert.Nil(t, findVolume(objs.DriverPod.Spec.Volumes, podTemplateVolumeName))

	value, ok := props["spark.kubernetes.executor.annotation.sparkoperator.k8s.io/pod-customization"]
	require.True(t, ok)
	c, err := mutateDecode(value)
	require.NoError(t, err)
	assert.Equal(t, []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "spark", Effect: corev1.TaintEffectNoSchedule}}, c.Tolerations)
	assert.Equal(t, testAffinity(), c.Affinity)
	assert.Equal(t, []corev1.EnvVar{{Name: "EXEC_ENV", Value: "1"}}, c.Env)
	assert.Equal(t, []string{"log-shipper"}, []string{c.Sidecars[0].Name})
	assert.Equal(t, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true)}, c.SecurityContext)
	cmVol := configMapVolumeName("exec.conf")
	assert.Equal(t, []string{cmVol, "data"}, volumeNames(c.Volumes), "no spark-local-dir-* volume")
	assert.Equal(t, []string{cmVol, "data"}, mountNames(c.VolumeMounts))
	require.NotNil(t, c.MemoryLimit)
	assert.Zero(t, c.MemoryLimit.Cmp(resource.MustParse("4Gi")), c.MemoryLimit.String())
	assert.Equal(t, "batch", c.PriorityClassName)

	// Without executor customizations there is no annotation at all.
	plain := sparkProps(t, build(t, newApp(withVersion("2.4.8")), Options{}))
	assert.Empty(t, keysWithPrefix(plain, "spark.kubernetes.executor.annotation."))
}

func TestExecutorMemoryLimit(t *testing.T) {
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Executor.MemoryLimit = ptr.To("4g")
		a.Spec.Executor.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	}), Options{})
	props := sparkProps(t, objs)
	value, ok := props["spark.kubernetes.executor.annotation.sparkoperator.k8s.io/pod-customization"]
	require.True(t, ok, "Spark overrides a template's memory limit; the webhook applies this one")
	c, err := mutateDecode(value)
	require.NoError(t, err)
	require.NotNil(t, c.MemoryLimit)
	assert.Equal(t, int64(4<<30), c.MemoryLimit.Value())
	assert.Nil(t, c.Tolerations, "the rest is in the template")
	assert.Nil(t, c.Env)
	assert.Nil(t, c.Volumes)
	tmpl := executorTemplatePod(t, objs)
	assert.Len(t, tmpl.Spec.Tolerations, 1)
	assert.Empty(t, tmpl.Spec.Containers[0].Resources.Limits)
	// The driver keeps Spark's limit.
	lim := driverContainer(t, objs).Resources.Limits[corev1.ResourceMemory]
	assert.Equal(t, "1408Mi", lim.String())
}

func TestPrometheus(t *testing.T) {
	app := newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.JavaOptions = ptr.To("-Xss4m")
		a.Spec.Monitoring = &v1beta2.MonitoringSpec{
			ExposeDriverMetrics:   true,
			ExposeExecutorMetrics: true,
			Prometheus:            &v1beta2.PrometheusSpec{JmxExporterJar: "/prometheus/jmx_prometheus_javaagent.jar", Port: ptr.To[int32](8090)},
		}
	})
	objs := build(t, app, Options{})
	const agent = "-javaagent:/prometheus/jmx_prometheus_javaagent.jar=8090:/etc/metrics/conf/prometheus.yaml"

	cm := objs.MetricsConfig
	require.NotNil(t, cm)
	assert.Equal(t, "pi-prom-conf", cm.Name)
	assert.Equal(t, testNamespace, cm.Namespace)
	assert.Equal(t, map[string]string{sparkpod.LabelAppName: "pi", sparkpod.LabelCreatedBy: "true"}, cm.Labels)
	assert.Equal(t, defaultMetricsProperties, cm.Data["metrics.properties"])
	assert.Equal(t, defaultPrometheusConfig, cm.Data["prometheus.yaml"])
	assert.Len(t, cm.Data, 2)

	props := sparkProps(t, objs)
	assert.Equal(t, "-Xss4m "+agent, props["spark.driver.extraJavaOptions"])
	assert.Equal(t, agent, props["spark.executor.extraJavaOptions"])
	assert.Equal(t, "team-a.pi", props["spark.metrics.namespace"])
	assert.Equal(t, "/etc/metrics/conf/metrics.properties", props["spark.metrics.conf"])
	for _, role := range []string{"driver", "executor"} {
		prefix := "spark.kubernetes." + role + ".annotation.prometheus.io/"
		assert.Equal(t, "true", props[prefix+"scrape"], role)
		assert.Equal(t, "8090", props[prefix+"port"], role)
		assert.Equal(t, "/metrics", props[prefix+"path"], role)
	}

	pod := objs.DriverPod
	assert.Equal(t, "true", pod.Annotations["prometheus.io/scrape"])
	assert.Equal(t, "8090", pod.Annotations["prometheus.io/port"])
	assert.Equal(t, "/metrics", pod.Annotations["prometheus.io/path"])
	ctr := driverContainer(t, objs)
	assert.Contains(t, ctr.Ports, corev1.ContainerPort{Name: "jmx-exporter", ContainerPort: 8090, Protocol: corev1.ProtocolTCP})
	vol := findVolume(pod.Spec.Volumes, "pi-prom-conf-vol")
	require.NotNil(t, vol)
	assert.Equal(t, "pi-prom-conf", vol.ConfigMap.Name)
	assert.Equal(t, "/etc/metrics/conf", findMount(ctr.VolumeMounts, "pi-prom-conf-vol").MountPath)

	tmpl := executorTemplatePod(t, objs)
	ectr := namedContainer(t, tmpl, sparkpod.ExecutorContainerName)
	assert.Contains(t, ectr.Ports, corev1.ContainerPort{Name: "jmx-exporter", ContainerPort: 8090, Protocol: corev1.ProtocolTCP})
	require.NotNil(t, findVolume(tmpl.Spec.Volumes, "pi-prom-conf-vol"))
	assert.Equal(t, "/etc/metrics/conf", findMount(ectr.VolumeMounts, "pi-prom-conf-vol").MountPath)
}

func TestPrometheusVariants(t *testing.T) {
	t.Run("driver only, custom port and name", func(t *testing.T) {
		objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
			a.Spec.Executor.JavaOptions = ptr.To("-Dexec=1")
			a.Spec.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true, Prometheus: &v1beta2.PrometheusSpec{
				JmxExporterJar: "/jmx.jar", Port: ptr.To[int32](9100), PortName: ptr.To("metrics")}}
		}), Options{})
		props := sparkProps(t, objs)
		assert.Equal(t, "-javaagent:/jmx.jar=9100:/etc/metrics/conf/prometheus.yaml", props["spark.driver.extraJavaOptions"])
		assert.Equal(t, "-Dexec=1", props["spark.executor.extraJavaOptions"], "executors not exposed")
		assert.Empty(t, keysWithPrefix(props, "spark.kubernetes.executor.annotation.prometheus.io/"))
		assert.Contains(t, driverContainer(t, objs).Ports, corev1.ContainerPort{Name: "metrics", ContainerPort: 9100, Protocol: corev1.ProtocolTCP})
		ectr := namedContainer(t, executorTemplatePod(t, objs), sparkpod.ExecutorContainerName)
		assert.Empty(t, ectr.Ports)
	})
	t.Run("files in the image", func(t *testing.T) {
		objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
			a.Spec.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true,
				MetricsPropertiesFile: ptr.To("/opt/metrics.properties"),
				Prometheus:            &v1beta2.PrometheusSpec{JmxExporterJar: "/jmx.jar", ConfigFile: ptr.To("/opt/prom.yaml")}}
		}), Options{})
		assert.Nil(t, objs.MetricsConfig)
		props := sparkProps(t, objs)
		assert.Equal(t, "/opt/metrics.properties", props["spark.metrics.conf"])
		assert.Equal(t, "-javaagent:/jmx.jar=8090:/opt/prom.yaml", props["spark.driver.extraJavaOptions"])
		assert.Nil(t, findVolume(objs.DriverPod.Spec.Volumes, "pi-prom-conf-vol"))
	})
	t.Run("inline configuration", func(t *testing.T) {
		objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
			a.Spec.Monitoring = &v1beta2.MonitoringSpec{ExposeDriverMetrics: true,
				MetricsProperties: ptr.To("*.sink.jmx.class=x\n"),
				Prometheus:        &v1beta2.PrometheusSpec{JmxExporterJar: "/jmx.jar", Configuration: ptr.To("rules: []\n")}}
		}), Options{})
		require.NotNil(t, objs.MetricsConfig)
		assert.Equal(t, map[string]string{"metrics.properties": "*.sink.jmx.class=x\n", "prometheus.yaml": "rules: []\n"}, objs.MetricsConfig.Data)
	})
}

func TestConfigMap(t *testing.T) {
	objs := build(t, newApp(), Options{})
	cm := objs.ConfigMap
	assert.Regexp(t, `^pi-[0-9a-f]{10}-conf$`, cm.Name)
	assert.Equal(t, testNamespace, cm.Namespace)
	assert.Equal(t, ptr.To(true), cm.Immutable)
	assert.Equal(t, map[string]string{sparkpod.LabelAppName: "pi", sparkpod.LabelAppSelector: testSub.AppID, sparkpod.LabelSubmissionID: testSub.SubmissionID}, cm.Labels)
	assert.ElementsMatch(t, []string{propertiesFile, executorTemplateKey}, keysOf(cm.Data))

	old := build(t, newApp(withVersion("2.4.8")), Options{})
	assert.Equal(t, []string{propertiesFile}, keysOf(old.ConfigMap.Data))
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestConfigMapNameFollowsContent(t *testing.T) {
	base := build(t, newApp(withConf("spark.user.x", "1")), Options{}).ConfigMap.Name
	assert.Equal(t, base, build(t, newApp(withConf("spark.user.x", "1")), Options{}).ConfigMap.Name, "nothing changed")
	assert.NotEqual(t, base, build(t, newApp(withConf("spark.user.x", "2")), Options{}).ConfigMap.Name, "a property changed")
	assert.NotEqual(t, base, build(t, newApp(withConf("spark.user.x", "1"), func(a *v1beta2.SparkApplication) {
		a.Spec.Executor.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	}), Options{}).ConfigMap.Name, "only the executor template changed")
	// Fields that shape only the driver Pod do not change the content.
	assert.Equal(t, base, build(t, newApp(withConf("spark.user.x", "1"), func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	}), Options{}).ConfigMap.Name)
}

func TestConfigMapTooLarge(t *testing.T) {
	be := buildErr(t, newApp(withConf("spark.user.huge", strings.Repeat("x", 1<<20))), Options{})
	assert.Contains(t, be.Error(), "more than a ConfigMap holds")
	assert.Contains(t, be.Error(), "sparkConf")

	// Escaping counts: 200 KiB of control characters is 1.2 MB written.
	be = buildErr(t, newApp(withConf("spark.user.ctrl", strings.Repeat("\x01", 200<<10))), Options{})
	assert.Contains(t, be.Error(), "more than a ConfigMap holds")

	// Large but within the limit is fine.
	objs := build(t, newApp(withConf("spark.user.big", strings.Repeat("x", 900<<10))), Options{})
	assert.Equal(t, strings.Repeat("x", 900<<10), sparkProps(t, objs)["spark.user.big"])
}

// Keys that tie the Pod, the Service and the properties together are the operator's.
func TestOperatorOwnedProperties(t *testing.T) {
	app := newApp(withConf(
		"spark.app.id", "user-id",
		"spark.driver.host", "evil.example.com",
		"spark.driver.bindAddress", "0.0.0.0",
		"spark.kubernetes.submitInDriver", "false",
		"spark.kubernetes.driver.pod.name", "from-conf",
		"spark.kubernetes.resource.type", "r",
	))
	objs := build(t, app, Options{})
	props := sparkProps(t, objs)
	assert.Equal(t, testSub.AppID, props["spark.app.id"])
	assert.Equal(t, objs.DriverService.Name+".team-a.svc", props["spark.driver.host"])
	assert.Equal(t, "true", props["spark.kubernetes.submitInDriver"])
	assert.Equal(t, objs.DriverPod.Name, props["spark.kubernetes.driver.pod.name"])
	assert.Equal(t, "from-conf", objs.DriverPod.Name)
	assert.Equal(t, "java", props["spark.kubernetes.resource.type"])
	assert.NotContains(t, props, "spark.driver.bindAddress")
	assert.NotContains(t, objs.ConfigMap.Data[propertiesFile], "spark.driver.bindAddress",
		"Spark refuses a bind address in the properties; the entrypoint passes it")

	// Validation refuses these, and the builder holds the line all the same.
	raw := newApp(withConf(
		"spark.kubernetes.namespace", "other",
		"spark.master", "local[*]",
	))
	v1beta2.SetSparkApplicationDefaults(raw)
	require.NotEmpty(t, v1beta2.ValidateSparkApplication(raw))
	rawObjs, err := Build(raw, testSub, Options{})
	require.NoError(t, err)
	rawProps := sparkProps(t, rawObjs)
	assert.Equal(t, testNamespace, rawProps["spark.kubernetes.namespace"])
	assert.Equal(t, "k8s://https://kubernetes.default.svc:443", rawProps["spark.master"])
}

// Kubeflow passes metadata.name, spec.mode and spec.deps as spark-submit flags (--name,
// --deploy-mode, --jars, ...). SparkSubmitArguments takes a flag over the --conf of the same key,
// and prepareSubmitEnvironment writes the flag's value into the configuration; then, for a JVM
// application, it appends the primary jar to spark.jars.
func TestSubmitFlagsWinOverSparkConf(t *testing.T) {
	const extra = "local:///opt/extra.jar"
	tests := []struct {
		name string
		app  *v1beta2.SparkApplication
		want map[string]string
	}{
		{
			name: "name and deploy mode",
			app:  newApp(withConf("spark.app.name", "other-name", "spark.submit.deployMode", "client")),
			want: map[string]string{"spark.app.name": "pi", "spark.submit.deployMode": "cluster"},
		},
		{
			name: "spark.jars from sparkConf when deps.jars is empty, plus the primary jar",
			app:  newApp(withConf("spark.jars", extra)),
			want: map[string]string{"spark.jars": extra + "," + testJar},
		},
		{
			name: "deps.jars over sparkConf",
			app: newApp(withConf("spark.jars", extra), func(a *v1beta2.SparkApplication) {
				a.Spec.Deps.Jars = []string{"local:///opt/a.jar"}
			}),
			want: map[string]string{"spark.jars": "local:///opt/a.jar," + testJar},
		},
		{
			name: "other deps over sparkConf",
			app: newApp(withConf("spark.files", "s3a://conf/f", "spark.jars.packages", "c:c:1", "spark.archives", "s3a://conf/a.zip"),
				func(a *v1beta2.SparkApplication) {
					a.Spec.Deps.Files = []string{"s3a://spec/f"}
					a.Spec.Deps.Packages = []string{"s:s:1"}
				}),
			want: map[string]string{"spark.files": "s3a://spec/f", "spark.jars.packages": "s:s:1", "spark.archives": "s3a://conf/a.zip"},
		},
		{
			name: "pyFiles over sparkConf",
			app: newApp(pythonApp, withConf("spark.submit.pyFiles", "s3a://conf/a.py"), func(a *v1beta2.SparkApplication) {
				a.Spec.Deps.PyFiles = []string{"s3a://spec/b.py"}
			}),
			want: map[string]string{"spark.submit.pyFiles": "s3a://spec/b.py"},
		},
		{
			name: "no primary jar for Python",
			app:  newApp(pythonApp, withConf("spark.jars", extra)),
			want: map[string]string{"spark.jars": extra},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props := sparkProps(t, build(t, tt.app, Options{}))
			for k, want := range tt.want {
				assert.Equal(t, want, props[k], k)
			}
		})
	}
}

func TestTypedFieldsOverrideSparkConf(t *testing.T) {
	app := newApp(withConf(
		"spark.driver.cores", "4",
		"spark.driver.memory", "8g",
		"spark.driver.memoryOverhead", "2g",
		"spark.executor.cores", "4",
		"spark.executor.memory", "8g",
		"spark.executor.instances", "10",
		"spark.driver.extraJavaOptions", "-Dfrom=conf",
		"spark.executor.extraJavaOptions", "-Dfrom=conf",
		"spark.kubernetes.driver.request.cores", "3",
		"spark.kubernetes.memoryOverheadFactor", "0.3",
		"spark.kubernetes.node.selector.pool", "conf",
		"spark.kubernetes.driverEnv.FOO", "conf",
		"spark.kubernetes.driver.label.team", "conf",
	), func(a *v1beta2.SparkApplication) {
		s := &a.Spec
		s.Driver.Cores = ptr.To[int32](2)
		s.Driver.Memory = ptr.To("2g")
		s.Driver.MemoryOverhead = ptr.To("512m")
		s.Driver.JavaOptions = ptr.To("-Dfrom=spec")
		s.Driver.CoreRequest = ptr.To("1500m")
		s.Driver.EnvVars = map[string]string{"FOO": "spec"}
		s.Driver.Labels = map[string]string{"team": "spec"}
		s.Executor.Cores = ptr.To[int32](3)
		s.Executor.Memory = ptr.To("3g")
		s.Executor.Instances = ptr.To[int32](5)
		s.Executor.JavaOptions = ptr.To("-Dfrom=spec")
		s.MemoryOverheadFactor = ptr.To("0.2")
		s.NodeSelector = map[string]string{"pool": "spec"}
	})
	objs := build(t, app, Options{})
	props := sparkProps(t, objs)
	for k, want := range map[string]string{
		"spark.driver.cores":                    "2",
		"spark.driver.memory":                   "2g",
		"spark.driver.memoryOverhead":           "512m",
		"spark.executor.cores":                  "3",
		"spark.executor.memory":                 "3g",
		"spark.executor.instances":              "5",
		"spark.driver.extraJavaOptions":         "-Dfrom=spec",
		"spark.executor.extraJavaOptions":       "-Dfrom=spec",
		"spark.kubernetes.driver.request.cores": "1500m",
		"spark.kubernetes.node.selector.pool":   "spec",
		"spark.kubernetes.driverEnv.FOO":        "spec",
		"spark.kubernetes.driver.label.team":    "spec",
	} {
		assert.Equal(t, want, props[k], k)
	}
	// Kubeflow passes spec.memoryOverheadFactor before spec.sparkConf (research/kubeflow.md
	// §3.1), so there the sparkConf entry wins.
	assert.Equal(t, "0.3", props["spark.kubernetes.memoryOverheadFactor"])
	ctr := driverContainer(t, objs)
	assert.Zero(t, ctr.Resources.Requests.Cpu().Cmp(resource.MustParse("1500m")), ctr.Resources.Requests.Cpu().String())
	assert.Zero(t, ctr.Resources.Requests.Memory().Cmp(resource.MustParse("2560Mi")), ctr.Resources.Requests.Memory().String())
	assert.Equal(t, "spec", envValue(t, ctr, "FOO"))
	assert.Equal(t, "spec", objs.DriverPod.Labels["team"])
	assert.Equal(t, "spec", objs.DriverPod.Spec.NodeSelector["pool"])

	// Without typed fields (no defaults over them), sparkConf is used.
	conf := build(t, newApp(withConf("spark.driver.cores", "3", "spark.driver.memory", "2g")), Options{})
	cp := sparkProps(t, conf)
	assert.Equal(t, "3", cp["spark.driver.cores"])
	assert.Equal(t, "2g", cp["spark.driver.memory"])
	dc := driverContainer(t, conf)
	assert.Equal(t, "3", dc.Resources.Requests.Cpu().String())
	assert.Zero(t, dc.Resources.Requests.Memory().Cmp(resource.MustParse("2432Mi")))
}

func TestDynamicAllocation(t *testing.T) {
	props := sparkProps(t, build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.DynamicAllocation = &v1beta2.DynamicAllocation{Enabled: true, InitialExecutors: ptr.To[int32](2),
			MinExecutors: ptr.To[int32](1), MaxExecutors: ptr.To[int32](8), ShuffleTrackingTimeout: ptr.To[int64](60000)}
	}), Options{}))
	for k, want := range map[string]string{
		"spark.dynamicAllocation.enabled":                 "true",
		"spark.dynamicAllocation.initialExecutors":        "2",
		"spark.dynamicAllocation.minExecutors":            "1",
		"spark.dynamicAllocation.maxExecutors":            "8",
		"spark.dynamicAllocation.shuffleTracking.enabled": "true",
		"spark.dynamicAllocation.shuffleTracking.timeout": "60000",
	} {
		assert.Equal(t, want, props[k], k)
	}
	assert.NotContains(t, props, "spark.executor.instances", "no default instances under dynamic allocation")
}

func TestDriverService(t *testing.T) {
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.ServiceLabels = map[string]string{"svc-label": "1"}
		a.Spec.Driver.ServiceAnnotations = map[string]string{"svc-note": "2"}
	}, withConf("spark.driver.port", "7077", "spark.blockManager.port", "7100", "spark.ui.port", "4041",
		"spark.kubernetes.driver.service.ipFamilyPolicy", "PreferDualStack",
		"spark.kubernetes.driver.service.ipFamilies", "IPv4,IPv6")), Options{})
	svc := objs.DriverService
	assert.Equal(t, "Service", svc.Kind)
	assert.Equal(t, "pi-eb0f4b1c-driver-svc", svc.Name)
	assert.Equal(t, testNamespace, svc.Namespace)
	assert.Equal(t, map[string]string{"svc-label": "1", sparkpod.LabelAppSelector: testSub.AppID, sparkpod.LabelAppName: "pi"}, svc.Labels)
	assert.Equal(t, map[string]string{"svc-note": "2"}, svc.Annotations)
	assert.Equal(t, corev1.ClusterIPNone, svc.Spec.ClusterIP)
	assert.Equal(t, map[string]string{sparkpod.LabelAppSelector: testSub.AppID, sparkpod.LabelSparkRole: sparkpod.RoleDriver}, svc.Spec.Selector)
	assert.Equal(t, ptr.To(corev1.IPFamilyPolicyPreferDualStack), svc.Spec.IPFamilyPolicy)
	assert.Equal(t, []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}, svc.Spec.IPFamilies)
	assert.Equal(t, []corev1.ServicePort{
		{Name: "driver-rpc-port", Port: 7077, TargetPort: intstr.FromInt32(7077), Protocol: corev1.ProtocolTCP},
		{Name: "blockmanager", Port: 7100, TargetPort: intstr.FromInt32(7100), Protocol: corev1.ProtocolTCP},
		{Name: "spark-ui", Port: 4041, TargetPort: intstr.FromInt32(4041), Protocol: corev1.ProtocolTCP},
	}, svc.Spec.Ports)
	// The selector picks the driver Pod, and the Pod listens where the Service sends.
	for k, v := range svc.Spec.Selector {
		assert.Equal(t, v, objs.DriverPod.Labels[k], k)
	}
	ports := map[string]int32{}
	for _, p := range driverContainer(t, objs).Ports {
		ports[p.Name] = p.ContainerPort
	}
	assert.Equal(t, map[string]int32{"driver-rpc-port": 7077, "blockmanager": 7100, "spark-ui": 4041}, ports)
	props := sparkProps(t, objs)
	assert.Equal(t, "7077", props["spark.driver.port"])
	assert.Equal(t, "7100", props["spark.driver.blockManager.port"])

	// spark.driver.blockManager.port wins over spark.blockManager.port.
	objs = build(t, newApp(withConf("spark.blockManager.port", "7100", "spark.driver.blockManager.port", "7200")), Options{})
	assert.Equal(t, int32(7200), objs.DriverService.Spec.Ports[1].Port)
	assert.Nil(t, objs.DriverService.Spec.IPFamilyPolicy)
	assert.Nil(t, objs.DriverService.Annotations)
}

func TestHadoopAndSparkConfigMaps(t *testing.T) {
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.HadoopConfigMap = ptr.To("hadoop-conf")
		a.Spec.SparkConfigMap = ptr.To("spark-conf")
		a.Spec.HadoopConf = map[string]string{"fs.s3a.endpoint": "minio:9000"}
	}), Options{})
	ctr := driverContainer(t, objs)
	assert.Equal(t, "/etc/hadoop/conf", envValue(t, ctr, "HADOOP_CONF_DIR"))
	assert.Equal(t, "/etc/spark/conf", envValue(t, ctr, "SPARK_CONF_DIR"))
	assert.Equal(t, 1, envCount(ctr.Env, "SPARK_CONF_DIR"))
	assert.Equal(t, "hadoop-conf", findVolume(objs.DriverPod.Spec.Volumes, "hadoop-configmap-volume").ConfigMap.Name)
	assert.Equal(t, "spark-conf", findVolume(objs.DriverPod.Spec.Volumes, "spark-configmap-volume").ConfigMap.Name)
	assert.Equal(t, "/etc/spark/conf", findMount(ctr.VolumeMounts, "spark-configmap-volume").MountPath)
	// spark.properties stays where --properties-file points.
	assert.Equal(t, "/opt/spark/conf", findMount(ctr.VolumeMounts, confVolumeName).MountPath)
	assert.Equal(t, "minio:9000", sparkProps(t, objs)["spark.hadoop.fs.s3a.endpoint"])
	tmpl := executorTemplatePod(t, objs)
	assert.NotNil(t, findVolume(tmpl.Spec.Volumes, "hadoop-configmap-volume"))
	execCtr := namedContainer(t, tmpl, sparkpod.ExecutorContainerName)
	assert.Equal(t, "/etc/hadoop/conf", envValue(t, execCtr, "HADOOP_CONF_DIR"))
	assert.Equal(t, "/etc/spark/conf", findMount(execCtr.VolumeMounts, "spark-configmap-volume").MountPath)
	assert.Equal(t, "/etc/spark/conf", envValue(t, execCtr, "SPARK_CONF_DIR"), "executors read the user's Spark configuration too")
	assert.Equal(t, 1, envCount(execCtr.Env, "SPARK_CONF_DIR"))
}

// mutateDecode reads a customization annotation exactly as the webhook does.
var mutateDecode = sparkpod.DecodeCustomization

func TestDriverPodFromTemplate(t *testing.T) {
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.Template = &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{
				Name:        "ignored",
				Labels:      map[string]string{"from-template": "1", sparkpod.LabelSparkRole: "evil"},
				Annotations: map[string]string{"note": "t"},
			},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyAlways,
				Containers: []corev1.Container{
					{Name: "proxy", Image: "envoy:1"},
					{Name: sparkpod.DriverContainerName, Env: []corev1.EnvVar{{Name: "FROM_TEMPLATE", Value: "1"}}},
				},
				Volumes: []corev1.Volume{{Name: "tmpl-vol", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			},
		}
	}), Options{})
	pod := objs.DriverPod
	assert.Equal(t, "pi-driver", pod.Name)
	assert.Equal(t, "1", pod.Labels["from-template"])
	assert.Equal(t, sparkpod.RoleDriver, pod.Labels[sparkpod.LabelSparkRole], "Spark's labels win")
	assert.Equal(t, "t", pod.Annotations["note"])
	assert.Equal(t, corev1.RestartPolicyNever, pod.Spec.RestartPolicy, "always overwritten")
	require.Len(t, pod.Spec.Containers, 2)
	assert.Equal(t, "proxy", pod.Spec.Containers[0].Name)
	assert.Equal(t, "envoy:1", pod.Spec.Containers[0].Image)
	assert.Empty(t, pod.Spec.Containers[0].Args, "the sidecar is left alone")
	ctr := driverContainer(t, objs)
	assert.Equal(t, testImage, ctr.Image)
	assert.Equal(t, "driver", ctr.Args[0])
	assert.Equal(t, "1", envValue(t, ctr, "FROM_TEMPLATE"))
	assert.NotNil(t, findVolume(pod.Spec.Volumes, "tmpl-vol"))
	assert.NotNil(t, findVolume(pod.Spec.Volumes, confVolumeName))
}

// A run of a ScheduledSparkApplication carries Metacontroller's controller-uid label of the
// schedule; on the driver Pod it would contradict the SparkApplication's own, and Metacontroller
// would refuse every answer.
func TestMetacontrollerSelectorLabelNotCopied(t *testing.T) {
	app := newApp(func(app *v1beta2.SparkApplication) {
		app.Labels = map[string]string{"controller-uid": "uid-of-the-schedule", "team": "analytics"}
	})
	objs := build(t, app, Options{})
	assert.NotContains(t, objs.DriverPod.Labels, "controller-uid")
	assert.Equal(t, "analytics", objs.DriverPod.Labels["team"])
	props := sparkProps(t, objs)
	assert.NotContains(t, props, "spark.kubernetes.executor.label.controller-uid")
	assert.NotContains(t, props, "spark.kubernetes.driver.label.controller-uid")
	assert.Equal(t, "analytics", props["spark.kubernetes.executor.label.team"])
}

// An empty gpu: {} asks for nothing: both CRDs accept it, and the Kubeflow operator ignores it.
func TestEmptyGPUIsIgnored(t *testing.T) {
	plain := build(t, newApp(), Options{})
	empty := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.GPU = &v1beta2.GPUSpec{}
		a.Spec.Executor.GPU = &v1beta2.GPUSpec{}
	}), Options{})
	assert.Equal(t, driverContainer(t, plain).Resources, driverContainer(t, empty).Resources)
	assert.Equal(t, executorTemplatePod(t, plain), executorTemplatePod(t, empty))
}

// Owner references written in the templates are kept; the executor template also names the
// SparkApplication as a plain owner (Kubeflow does the same, for Kueue), once.
func TestTemplateOwnerReferences(t *testing.T) {
	theirs := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Workload", Name: "w", UID: "workload-uid"}
	app := metav1.OwnerReference{APIVersion: "sparkoperator.k8s.io/v1beta2", Kind: "SparkApplication", Name: testAppName, UID: "3f7b1c2e-uid"}
	tests := []struct {
		name         string
		template     []metav1.OwnerReference
		wantDriver   []metav1.OwnerReference
		wantExecutor []metav1.OwnerReference
	}{
		{"no template", nil, nil, []metav1.OwnerReference{app}},
		{"the user's own", []metav1.OwnerReference{theirs}, []metav1.OwnerReference{theirs}, []metav1.OwnerReference{theirs, app}},
		{"the application already named", []metav1.OwnerReference{app}, []metav1.OwnerReference{app}, []metav1.OwnerReference{app}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
				if tt.template == nil {
					return
				}
				meta := metav1.ObjectMeta{OwnerReferences: tt.template}
				a.Spec.Driver.Template = &corev1.PodTemplateSpec{ObjectMeta: meta}
				a.Spec.Executor.Template = &corev1.PodTemplateSpec{ObjectMeta: *meta.DeepCopy()}
			}), Options{})
			assert.Equal(t, tt.wantDriver, objs.DriverPod.OwnerReferences)
			assert.Equal(t, tt.wantExecutor, executorTemplatePod(t, objs).OwnerReferences)
		})
	}
	noUID := build(t, newApp(func(a *v1beta2.SparkApplication) { a.UID = "" }), Options{})
	assert.Empty(t, executorTemplatePod(t, noUID).OwnerReferences, "a reference without a uid would be refused")
}

// A driver PodDisruptionBudget needs both the application's request and the registration's
// switch; it protects the attempt's driver alone.
func TestDriverPodDisruptionBudget(t *testing.T) {
	ask := func(a *v1beta2.SparkApplication) { a.Spec.DriverPodDisruptionBudget = ptr.To(true) }
	tests := []struct {
		name string
		app  *v1beta2.SparkApplication
		opts Options
		want bool
	}{
		{"asked and enabled", newApp(ask), Options{DriverPDBs: true}, true},
		{"asked, not enabled by the operator", newApp(ask), Options{}, false},
		{"enabled, not asked", newApp(), Options{DriverPDBs: true}, false},
		{"asked false", newApp(func(a *v1beta2.SparkApplication) { a.Spec.DriverPodDisruptionBudget = ptr.To(false) }), Options{DriverPDBs: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, tt.opts)
			if !tt.want {
				assert.Nil(t, objs.DriverPDB)
				return
			}
			pdb := objs.DriverPDB
			require.NotNil(t, pdb)
			assert.Equal(t, objs.DriverPod.Name, pdb.Name)
			assert.Equal(t, testNamespace, pdb.Namespace)
			assert.Equal(t, "1", pdb.Spec.MinAvailable.String())
			assert.Nil(t, pdb.Spec.MaxUnavailable)
			require.NotNil(t, pdb.Spec.Selector)
			assert.Equal(t, map[string]string{sparkpod.LabelAppSelector: testSub.AppID, sparkpod.LabelSparkRole: sparkpod.RoleDriver}, pdb.Spec.Selector.MatchLabels)
			for k, v := range pdb.Spec.Selector.MatchLabels {
				assert.Equal(t, v, objs.DriverPod.Labels[k], "the budget selects the driver Pod")
			}
			assert.Contains(t, objs.List(), any(pdb))
		})
	}
	named := build(t, newApp(ask, func(a *v1beta2.SparkApplication) { a.Spec.Driver.PodName = ptr.To("etl-driver-0") }), Options{DriverPDBs: true})
	assert.Equal(t, "etl-driver-0", named.DriverPDB.Name, "named after the driver Pod, as Kubeflow's")
}

// An application on a SparkCluster keeps its standalone master; any other is Kubernetes'.
func TestStandaloneMasterKept(t *testing.T) {
	app := newApp(func(app *v1beta2.SparkApplication) {
		app.Spec.SparkConf = map[string]string{"spark.master": "spark://prod-master-svc:7077"}
	})
	assert.Equal(t, "spark://prod-master-svc:7077", sparkProps(t, build(t, app, Options{}))["spark.master"])
	assert.Equal(t, "k8s://https://kubernetes.default.svc:443", sparkProps(t, build(t, newApp(), Options{}))["spark.master"])
}

// The caller's Pod labels reach the driver and the executors, even in the operator's domain,
// which the spec's labels may not use.
func TestPodLabels(t *testing.T) {
	objs := build(t, newApp(), Options{PodLabels: map[string]string{"sparkoperator.k8s.io/connect-name": "nb"}})
	assert.Equal(t, "nb", objs.DriverPod.Labels["sparkoperator.k8s.io/connect-name"])
	assert.Equal(t, "nb", sparkProps(t, objs)["spark.kubernetes.executor.label.sparkoperator.k8s.io/connect-name"])
}

// TestDriverVolumesFromSparkConf: spark.kubernetes.driver.volumes.* mount in the driver Pod as
// spark-submit's MountVolumesFeatureStep would (found porting Spark's VolumeSuite, whose inputs
// are these properties); the executors' stay properties, for Spark.
func TestDriverVolumesFromSparkConf(t *testing.T) {
	objs := build(t, newApp(withConf(
		"spark.kubernetes.driver.volumes.emptyDir.data.mount.path", "/data",
		"spark.kubernetes.driver.volumes.emptyDir.data.options.medium", "Memory",
		"spark.kubernetes.executor.volumes.emptyDir.data.mount.path", "/data",
	)), Options{})
	var found *corev1.Volume
	for i := range objs.DriverPod.Spec.Volumes {
		if objs.DriverPod.Spec.Volumes[i].Name == "data" {
			found = &objs.DriverPod.Spec.Volumes[i]
		}
	}
	require.NotNil(t, found, "the driver Pod has the volume")
	require.NotNil(t, found.EmptyDir)
	assert.Equal(t, corev1.StorageMediumMemory, found.EmptyDir.Medium)
	assert.Contains(t, driverContainer(t, objs).VolumeMounts, corev1.VolumeMount{Name: "data", MountPath: "/data"})
	assert.Equal(t, "/data", sparkProps(t, objs)["spark.kubernetes.executor.volumes.emptyDir.data.mount.path"])
	for _, v := range executorTemplatePod(t, objs).Spec.Volumes {
		assert.NotEqual(t, "data", v.Name, "the executors' volume is Spark's to mount")
	}
}
