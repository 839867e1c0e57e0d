package children

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// sparkProperties writes spark.properties in the order the Kubeflow operator passes --conf
// options to spark-submit (later ones win, so typed fields override spec.sparkConf), then the
// properties of spark-submit's own flags (--name, --deploy-mode, --jars, ...), which win over
// any --conf of the same key, and then what spark-submit and its feature steps add, which
// override everything.
func (b *builder) sparkProperties() error {
	b.namespaceProperties()
	b.imageProperties()
	b.userProperties()
	if err := b.driverProperties(); err != nil {
		return err
	}
	if err := b.executorProperties(); err != nil {
		return err
	}
	b.nodeSelectorProperties()
	b.dynamicAllocationProperties()
	b.submitProperties()
	b.dependencyProperties()
	b.eventLogProperties()
	b.objs.DefaultEventLog = b.defaultEventLog()
	b.featureStepProperties()
	return nil
}

// namespaceProperties are the first --conf options the Kubeflow operator passes.
func (b *builder) namespaceProperties() {
	c := b.conf
	c.set("spark.kubernetes.namespace", b.namespace())
	// The submission client waits for nothing here; the Kubeflow operator passes the same.
	c.set("spark.kubernetes.submission.waitAppCompletion", "false")
}

// submitProperties are what spark-submit derives from its --name and --deploy-mode flags.
func (b *builder) submitProperties() {
	c := b.conf
	// The Apache operator names the application only where sparkConf names it; otherwise the
	// driver's spark-submit takes its default.
	if !b.opts.Apache || c.get("spark.app.name") != "" {
		c.set("spark.app.name", b.app.Name)
	}
	c.set("spark.submit.deployMode", string(v1beta2.DeployModeCluster))
}

// dependencyProperties are spark-submit's --jars, --packages, --py-files, ... as the
// properties spark-submit turns them into. Kubeflow passes a flag only for a non-empty list;
// without it the --conf value stays.
func (b *builder) dependencyProperties() {
	c, deps := b.conf, b.spec.Deps
	jars := deps.Jars
	if b.jvm() && b.spec.MainApplicationFile != nil && *b.spec.MainApplicationFile != "" {
		if len(jars) == 0 {
			jars = splitList(c.get("spark.jars"))
		}
		// spark-submit adds the primary jar of a JVM application to spark.jars.
		jars = append(append([]string(nil), jars...), *b.spec.MainApplicationFile)
	}
	for _, d := range []struct {
		key  string
		list []string
	}{
		{"spark.jars", jars},
		{"spark.jars.packages", deps.Packages},
		{"spark.jars.excludes", deps.ExcludePackages},
		{"spark.jars.repositories", deps.Repositories},
		{"spark.submit.pyFiles", deps.PyFiles},
		{"spark.files", deps.Files},
		{"spark.archives", deps.Archives},
	} {
		if len(d.list) > 0 {
			c.set(d.key, strings.Join(d.list, ","))
		}
	}
}

func (b *builder) imageProperties() {
	c, s := b.conf, b.spec
	c.setString("spark.kubernetes.container.image", s.Image)
	c.setString("spark.kubernetes.container.image.pullPolicy", s.ImagePullPolicy)
	if len(s.ImagePullSecrets) > 0 {
		c.set("spark.kubernetes.container.image.pullSecrets", strings.Join(s.ImagePullSecrets, ","))
	}
	c.setString("spark.kubernetes.pyspark.pythonVersion", s.PythonVersion)
	c.setString("spark.kubernetes.memoryOverheadFactor", s.MemoryOverheadFactor)
}

// userProperties are spec.sparkConf and spec.hadoopConf.
func (b *builder) userProperties() {
	for k, v := range b.spec.SparkConf {
		if k == "spark.kubernetes.driver.pod.name" {
			continue // the builder decides the name, from the same inputs
		}
		b.conf.set(k, v)
	}
	b.conf.setMap("spark.hadoop.", b.spec.HadoopConf)
	b.conf.set("spark.kubernetes.driver.pod.name", b.driverPodName)
}

func (b *builder) driverProperties() error {
	c, d := b.conf, &b.spec.Driver
	b.operatorLabels("spark.kubernetes.driver.label.", d.Labels)
	// The role's image, else spec.image, as Kubeflow passes it: it wins over a role image in
	// spec.sparkConf, like every typed field.
	if image := b.image(&d.SparkPodSpec); image != "" {
		c.set("spark.kubernetes.driver.container.image", image)
	}
	c.setInt("spark.driver.cores", d.Cores)
	c.setString("spark.kubernetes.driver.request.cores", d.CoreRequest)
	c.setString("spark.kubernetes.driver.limit.cores", d.CoreLimit)
	c.setString("spark.driver.memory", d.Memory)
	c.setString("spark.driver.memoryOverhead", d.MemoryOverhead)
	c.setString("spark.kubernetes.authenticate.driver.serviceAccountName", d.ServiceAccount)
	if def := b.opts.DefaultServiceAccount; def != "" && d.ServiceAccount == nil && (d.Template == nil || d.Template.Spec.ServiceAccountName == "") {
		c.set("spark.kubernetes.authenticate.driver.serviceAccountName", def)
	}
	c.setString("spark.driver.extraJavaOptions", d.JavaOptions)
	c.setString("spark.kubernetes.driver.master", d.KubernetesMaster)
	c.setMap("spark.kubernetes.driver.annotation.", d.Annotations)
	c.setMap("spark.kubernetes.driver.service.label.", d.ServiceLabels)
	c.setMap("spark.kubernetes.driver.service.annotation.", d.ServiceAnnotations)
	return b.roleProperties("driver", "spark.kubernetes.driverEnv.", &d.SparkPodSpec)
}

func (b *builder) executorProperties() error {
	c, e := b.conf, &b.spec.Executor
	b.operatorLabels("spark.kubernetes.executor.label.", e.Labels)
	c.setInt("spark.executor.instances", e.Instances)
	if image := b.image(&e.SparkPodSpec); image != "" {
		c.set("spark.kubernetes.executor.container.image", image)
	}
	c.setInt("spark.executor.cores", e.Cores)
	c.setString("spark.kubernetes.executor.request.cores", e.CoreRequest)
	c.setString("spark.kubernetes.executor.limit.cores", e.CoreLimit)
	c.setString("spark.executor.memory", e.Memory)
	c.setString("spark.executor.memoryOverhead", e.MemoryOverhead)
	c.setString("spark.kubernetes.authenticate.executor.serviceAccountName", e.ServiceAccount)
	if e.DeleteOnTermination != nil {
		c.set("spark.kubernetes.executor.deleteOnTermination", strconv.FormatBool(*e.DeleteOnTermination))
	}
	c.setMap("spark.kubernetes.executor.annotation.", e.Annotations)
	c.setString("spark.executor.extraJavaOptions", e.JavaOptions)
	return b.roleProperties("executor", "spark.executorEnv.", &e.SparkPodSpec)
}

// operatorLabels are the labels the Kubeflow operator asks Spark to put on a role's Pods: the
// application's own labels (except Kueue's, which would make Kueue manage each Pod on its own),
// the role's labels, and the operator's.
func (b *builder) operatorLabels(prefix string, role map[string]string) {
	for k, v := range b.app.Labels {
		if !strings.HasPrefix(k, "kueue.x-k8s.io/") && !sparkpod.OwnedLabel(k) {
			b.conf.set(prefix+k, v)
		}
	}
	for k, v := range role {
		if !sparkpod.OwnedLabel(k) {
			b.conf.set(prefix+k, v)
		}
	}
	b.conf.set(prefix+sparkpod.LabelAppName, b.app.Name)
	b.conf.set(prefix+sparkpod.LabelLaunchedBy, "true")
	b.conf.set(prefix+sparkpod.LabelSubmissionID, b.sub.SubmissionID)
	for k, v := range b.opts.PodLabels {
		b.conf.set(prefix+k, v)
	}
}

// roleProperties are what driver and executors share: env from secrets, env vars, mounted
// secrets and local-dir volumes.
func (b *builder) roleProperties(role, envPrefix string, ps *v1beta2.SparkPodSpec) error {
	c := b.conf
	for name, ref := range ps.EnvSecretKeyRefs {
		c.set("spark.kubernetes."+role+".secretKeyRef."+name, ref.Name+":"+ref.Key)
	}
	c.setMap(envPrefix, ps.EnvVars)
	for _, s := range ps.Secrets {
		c.set("spark.kubernetes."+role+".secrets."+s.Name, s.Path)
		switch s.Type {
		case v1beta2.SecretTypeGCPServiceAccount:
			c.set(envPrefix+"GOOGLE_APPLICATION_CREDENTIALS", path.Join(s.Path, "key.json"))
		case v1beta2.SecretTypeHadoopDelegationToken:
			c.set(envPrefix+"HADOOP_TOKEN_FILE_LOCATION", path.Join(s.Path, "hadoop.token"))
		}
	}
	return b.localDirProperties(role, ps.VolumeMounts)
}

// localDirProperties describe the spark-local-dir-* mounts of a role as Spark volume properties,
// as the Kubeflow operator passes them: Spark then mounts them itself and uses them as local
// (shuffle and spill) directories.
func (b *builder) localDirProperties(role string, mounts []corev1.VolumeMount) error {
	for _, m := range mounts {
		if !strings.HasPrefix(m.Name, localDirPrefix) {
			continue
		}
		vol := b.volume(m.Name)
		if vol == nil {
			return buildErrorf("spec.%s.volumeMounts: volume %q is not in spec.volumes", role, m.Name)
		}
		kind, opts, err := localDirVolumeOptions(vol)
		if err != nil {
			return buildErrorf("spec.volumes[%s]: %v", vol.Name, err)
		}
		prefix := fmt.Sprintf("spark.kubernetes.%s.volumes.%s.%s.", role, kind, vol.Name)
		b.conf.set(prefix+"mount.path", m.MountPath)
		if m.SubPath != "" {
			b.conf.set(prefix+"mount.subPath", m.SubPath)
		}
		if m.ReadOnly {
			b.conf.set(prefix+"mount.readOnly", "true")
		}
		for _, o := range opts {
			b.conf.set(prefix+"options."+o[0], o[1])
		}
	}
	return nil
}

const localDirPrefix = "spark-local-dir-"

// localDirVolumeOptions maps a volume to Spark's volume type and options. Spark mounts only
// these four kinds.
func localDirVolumeOptions(vol *corev1.Volume) (string, [][2]string, error) {
	switch {
	case vol.EmptyDir != nil:
		var opts [][2]string
		if vol.EmptyDir.Medium != corev1.StorageMediumDefault {
			opts = append(opts, [2]string{"medium", string(vol.EmptyDir.Medium)})
		}
		if vol.EmptyDir.SizeLimit != nil {
			opts = append(opts, [2]string{"sizeLimit", vol.EmptyDir.SizeLimit.String()})
		}
		return "emptyDir", opts, nil
	case vol.HostPath != nil:
		opts := [][2]string{{"path", vol.HostPath.Path}}
		if vol.HostPath.Type != nil && *vol.HostPath.Type != "" {
			opts = append(opts, [2]string{"type", string(*vol.HostPath.Type)})
		}
		return "hostPath", opts, nil
	case vol.NFS != nil:
		opts := [][2]string{{"path", vol.NFS.Path}, {"server", vol.NFS.Server}}
		if vol.NFS.ReadOnly {
			opts = append(opts, [2]string{"readOnly", "true"})
		}
		return "nfs", opts, nil
	case vol.PersistentVolumeClaim != nil:
		opts := [][2]string{{"claimName", vol.PersistentVolumeClaim.ClaimName}}
		if vol.PersistentVolumeClaim.ReadOnly {
			opts = append(opts, [2]string{"readOnly", "true"})
		}
		return "persistentVolumeClaim", opts, nil
	}
	return "", nil, fmt.Errorf("a spark-local-dir-* volume must be an emptyDir, hostPath, nfs or persistentVolumeClaim volume, the kinds Spark can mount as local directories")
}

func (b *builder) volume(name string) *corev1.Volume {
	for i := range b.spec.Volumes {
		if b.spec.Volumes[i].Name == name {
			return &b.spec.Volumes[i]
		}
	}
	return nil
}

func (b *builder) nodeSelectorProperties() {
	b.conf.setMap("spark.kubernetes.node.selector.", b.spec.NodeSelector)
}

func (b *builder) dynamicAllocationProperties() {
	da := b.spec.DynamicAllocation
	if da == nil || !da.Enabled {
		return
	}
	c := b.conf
	c.set("spark.dynamicAllocation.enabled", "true")
	c.setInt("spark.dynamicAllocation.initialExecutors", da.InitialExecutors)
	c.setInt("spark.dynamicAllocation.minExecutors", da.MinExecutors)
	c.setInt("spark.dynamicAllocation.maxExecutors", da.MaxExecutors)
	tracking := da.ShuffleTrackingEnabled == nil || *da.ShuffleTrackingEnabled
	c.set("spark.dynamicAllocation.shuffleTracking.enabled", strconv.FormatBool(tracking))
	if da.ShuffleTrackingTimeout != nil {
		c.set("spark.dynamicAllocation.shuffleTracking.timeout", strconv.FormatInt(*da.ShuffleTrackingTimeout, 10))
	}
}

// featureStepProperties are what spark-submit and Spark's driver feature steps write, last, so
// nothing the user sets can break the contract between the Pod and its properties.
func (b *builder) featureStepProperties() {
	c := b.conf
	// A standalone cluster's master (a SparkCluster's spark://<name>-master-svc:7077) runs the
	// executors on its workers; any other master is Kubernetes'.
	if !v1beta2.StandaloneMaster(b.spec.SparkConf["spark.master"]) {
		c.set("spark.master", "k8s://https://kubernetes.default.svc:443")
	}
	c.set("spark.app.id", b.sub.AppID)
	c.set("spark.kubernetes.namespace", b.namespace())
	c.set("spark.kubernetes.driver.pod.name", b.driverPodName)
	c.set("spark.kubernetes.submitInDriver", "true")
	if !b.excludesFeatureStep(driverServiceFeatureStep) {
		c.set("spark.driver.host", b.driverServiceName+"."+b.namespace()+".svc")
	}
	// The image's entrypoint passes the bind address on the command line; a stale one in the
	// file would only confuse whoever reads it.
	delete(c, "spark.driver.bindAddress")
	c.set("spark.driver.port", strconv.Itoa(int(b.driverPort())))
	c.set("spark.driver.blockManager.port", strconv.Itoa(int(b.blockManagerPort())))
	if c.get("spark.kubernetes.memoryOverheadFactor") == "" {
		factor := jvmOverheadFactor
		if !b.jvm() {
			factor = nonJVMOverheadFactor
		}
		c.set("spark.kubernetes.memoryOverheadFactor", factor)
	}
	resourceType := "java"
	switch b.spec.Type {
	case v1beta2.SparkApplicationTypePython:
		resourceType = "python"
	case v1beta2.SparkApplicationTypeR:
		resourceType = "r"
	}
	c.set("spark.kubernetes.resource.type", resourceType)
	c.setIfAbsent("spark.kubernetes.executor.podNamePrefix", b.executorPodNamePrefix())
	// From Spark 4.1 a driver that dies of an exception writes it to its own Pod as the
	// spark.exit-exception annotation, where the status reads it (sparkapp.failureCause): a
	// user sees why in kubectl get. Off by default in Spark; the Apache operator turns it on too.
	if b.version.atLeast(4, 1) {
		c.setIfAbsent("spark.kubernetes.driver.annotateExitException", "true")
	}
}

// executorPodNamePrefix names executors <app>-<8 hex of the attempt>-exec-<n>: recognisable,
// distinct from a previous attempt's executors that may still be terminating, and short enough
// for Spark 3.x's 47-character limit.
func (b *builder) executorPodNamePrefix() string {
	id := b.attemptID()
	base := sanitizeLabelValue(b.app.Name)
	if len(base) > 38 {
		base = strings.TrimRight(base[:38], "-")
	}
	if base == "" {
		base = "spark"
	}
	return base + "-" + id
}

// attemptID is the short id of the attempt in the names of its executors and driver Service:
// the first 8 hex digits of its Spark application id.
func (b *builder) attemptID() string {
	id := strings.TrimPrefix(b.sub.AppID, "spark-")
	if len(id) > 8 {
		id = id[:8]
	}
	return id
}
