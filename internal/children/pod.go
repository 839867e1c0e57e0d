package children

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/mutate"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

const (
	confVolumeName        = "spark-conf-volume-driver"
	podTemplateVolumeName = "pod-template-volume"
	// sparkUser is the user the Kubeflow operator submits as (its image runs as "spark"), and
	// so the user Hadoop file systems see unless spec.proxyUser says otherwise.
	sparkUser = "spark"
)

// driverPodBuild is the driver Pod as the steps shape it.
type driverPodBuild struct {
	*builder
	pod   *corev1.Pod
	spark int // index of the Spark container
}

func (d *driverPodBuild) container() *corev1.Container { return &d.pod.Spec.Containers[d.spark] }

func (d *driverPodBuild) addEnv(env ...corev1.EnvVar) {
	ctr := d.container()
	for _, e := range env {
		if !slices.ContainsFunc(ctr.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name }) {
			ctr.Env = append(ctr.Env, e)
		}
	}
}

func (d *driverPodBuild) addVolume(vol corev1.Volume, mount corev1.VolumeMount) {
	if !hasVolumeNamed(d.pod.Spec.Volumes, vol.Name) {
		d.pod.Spec.Volumes = append(d.pod.Spec.Volumes, vol)
	}
	ctr := d.container()
	ctr.VolumeMounts = append(ctr.VolumeMounts, mount)
}

// driverPod builds the driver Pod in the order of Spark's KubernetesDriverBuilder, starting from
// spec.driver.template, then merges the driver customizations as the webhook would.
func (b *builder) driverPod() error {
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}}
	if t := b.spec.Driver.Template; t != nil {
		pod.ObjectMeta = *t.ObjectMeta.DeepCopy()
		pod.Spec = *t.Spec.DeepCopy()
	}
	pod.ObjectMeta = metav1.ObjectMeta{
		Name:        b.driverPodName,
		Namespace:   b.namespace(),
		Labels:      pod.Labels,
		Annotations: pod.Annotations,
		// The user's own references are kept; Metacontroller adds the SparkApplication as the
		// controller when it creates the Pod.
		OwnerReferences: pod.OwnerReferences,
	}
	d := &driverPodBuild{builder: b, pod: pod, spark: ensureSparkContainer(pod, sparkpod.DriverContainerName)}
	ctr := d.container()
	// Room for what the steps add, so that the appends below do not reallocate.
	ctr.Env = slices.Grow(ctr.Env, 8)
	ctr.VolumeMounts = slices.Grow(ctr.VolumeMounts, 4)
	pod.Spec.Volumes = slices.Grow(pod.Spec.Volumes, 4)
	// Spark's feature steps, in KubernetesDriverBuilder's order.
	if err := d.basicDriver(); err != nil {
		return fmt.Errorf("BasicDriverFeatureStep: %w", err)
	}
	d.mountSecrets()
	if err := d.envSecrets(); err != nil {
		return fmt.Errorf("EnvSecretsFeatureStep: %w", err)
	}
	d.driverCommand()
	d.podTemplateVolume()
	d.customize()
	d.mountConfVolumes()
	if err := d.eventLogVolume(); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	d.privilegeEscalation()
	d.localDirs()
	d.confVolume()
	b.objs.DriverPod = pod
	return nil
}

// appName is the application's name as Spark's label shows it: spark.app.name, else Spark's
// default.
func appName(c properties) string {
	if name := c.get("spark.app.name"); name != "" {
		return name
	}
	return "spark"
}

// basicDriver is Spark's BasicDriverFeatureStep: metadata, image, ports, resources and the
// pod-level settings Spark derives from its properties.
func (d *driverPodBuild) basicDriver() error {
	c, pod := d.conf, d.pod
	appID := d.sub.AppID

	labels := prefixed(c, "spark.kubernetes.driver.label.")
	if labels == nil {
		labels = map[string]string{}
	}
	if d.version.atLeast(4, 0) {
		substituteAppID(labels, appID)
	}
	labels[sparkpod.LabelAppSelector] = appID
	labels[sparkpod.LabelSparkRole] = sparkpod.RoleDriver
	labels[sparkpod.LabelSparkVersion] = d.spec.SparkVersion
	labels[sparkpod.LabelSparkAppName] = sanitizeLabelValue(appName(c))
	pod.Labels = merge(pod.Labels, labels)
	if len(validation.IsValidLabelValue(d.spec.SparkVersion)) > 0 {
		delete(pod.Labels, sparkpod.LabelSparkVersion)
	}
	annotations := prefixed(c, "spark.kubernetes.driver.annotation.")
	substituteAppID(annotations, appID)
	pod.Annotations = merge(pod.Annotations, annotations)

	ctr := d.container()
	ctr.Image = firstNonEmpty(c.get("spark.kubernetes.driver.container.image"), c.get("spark.kubernetes.container.image"))
	if ctr.Image == "" {
		return buildErrorf("no driver image: set spec.image or spec.driver.image")
	}
	ctr.ImagePullPolicy = corev1.PullPolicy(firstNonEmpty(c.get("spark.kubernetes.container.image.pullPolicy"), string(corev1.PullIfNotPresent)))
	// Spark writes no termination message; the end of a failed driver's log is where its
	// exception is, and the status reads the cause from there (sparkapp.failureCause).
	if ctr.TerminationMessagePolicy == "" {
		ctr.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	}
	for _, p := range []corev1.ContainerPort{
		{Name: "driver-rpc-port", ContainerPort: d.driverPort()},
		{Name: "blockmanager", ContainerPort: d.blockManagerPort()},
		{Name: "spark-ui", ContainerPort: d.uiPort()},
	} {
		if p.ContainerPort != 0 {
			p.Protocol = corev1.ProtocolTCP
			ctr.Ports = append(ctr.Ports, p)
		}
	}

	user := firstNonEmpty(c.get("spark.kubernetes.driverEnv.SPARK_USER"), sparkUser)
	d.addEnv(
		corev1.EnvVar{Name: "SPARK_USER", Value: user},
		corev1.EnvVar{Name: "SPARK_APPLICATION_ID", Value: appID},
	)
	for _, name := range sortedKeys(prefixed(c, "spark.kubernetes.driverEnv.")) {
		d.addEnv(corev1.EnvVar{Name: name, Value: c.get("spark.kubernetes.driverEnv." + name)})
	}
	d.addEnv(corev1.EnvVar{Name: "SPARK_DRIVER_BIND_ADDRESS", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"},
	}})

	if err := d.resources(); err != nil {
		return err
	}

	spec := &pod.Spec
	spec.RestartPolicy = corev1.RestartPolicyNever
	noLinks := false
	// Thousands of Services in a namespace would otherwise overflow the environment.
	spec.EnableServiceLinks = &noLinks
	for _, name := range splitList(c.get("spark.kubernetes.container.image.pullSecrets")) {
		ref := corev1.LocalObjectReference{Name: name}
		if !slices.Contains(spec.ImagePullSecrets, ref) {
			spec.ImagePullSecrets = append(spec.ImagePullSecrets, ref)
		}
	}
	spec.NodeSelector = merge(spec.NodeSelector, prefixed(c, "spark.kubernetes.node.selector."))
	spec.NodeSelector = merge(spec.NodeSelector, prefixed(c, "spark.kubernetes.driver.node.selector."))
	if len(spec.NodeSelector) == 0 {
		spec.NodeSelector = nil
	}
	if name := firstNonEmpty(c.get("spark.kubernetes.driver.scheduler.name"), c.get("spark.kubernetes.scheduler.name")); name != "" {
		spec.SchedulerName = name
	}
	if sa := c.get("spark.kubernetes.authenticate.driver.serviceAccountName"); sa != "" {
		spec.ServiceAccountName = sa
	}
	return nil
}

// resources sets cpu and memory as Spark does (memory request = limit = heap + overhead, in
// MiB), then the Kubeflow memoryLimit and Spark's custom resources.
func (d *driverPodBuild) resources() error {
	c := d.conf
	res := &d.container().Resources
	if res.Requests == nil {
		res.Requests = corev1.ResourceList{}
	}
	if res.Limits == nil {
		res.Limits = corev1.ResourceList{}
	}
	cpu := firstNonEmpty(c.get("spark.kubernetes.driver.request.cores"), c.get("spark.driver.cores"), "1")
	q, err := resource.ParseQuantity(strings.TrimSpace(cpu))
	if err != nil {
		return buildErrorf("driver CPU request %q is not a quantity", cpu)
	}
	res.Requests[corev1.ResourceCPU] = q
	if limit := c.get("spark.kubernetes.driver.limit.cores"); limit != "" {
		q, err := resource.ParseQuantity(strings.TrimSpace(limit))
		if err != nil {
			return buildErrorf("spark.kubernetes.driver.limit.cores %q is not a quantity", limit)
		}
		res.Limits[corev1.ResourceCPU] = q
	}
	mib, err := containerMemoryMiB(c, "driver", d.version)
	if err != nil {
		return buildErrorf("driver memory: %v", err)
	}
	mem := *resource.NewQuantity(mib*v1beta2.MiB, resource.BinarySI)
	res.Requests[corev1.ResourceMemory] = mem
	res.Limits[corev1.ResourceMemory] = mem
	if s := d.spec.Driver.MemoryLimit; s != nil {
		q, err := v1beta2.ParseMemoryLimit(*s)
		if err != nil {
			return buildErrorf("spec.driver.memoryLimit: %v", err)
		}
		res.Limits[corev1.ResourceMemory] = q
	}
	// spark.driver.resource.<name>.amount with .vendor becomes a limit on <vendor>/<name>.
	for _, key := range sortedKeys(prefixed(c, "spark.driver.resource.")) {
		name, ok := strings.CutSuffix(key, ".amount")
		if !ok {
			continue
		}
		vendor := c.get("spark.driver.resource." + name + ".vendor")
		if vendor == "" {
			return buildErrorf("spark.driver.resource.%s.amount needs spark.driver.resource.%s.vendor, the Kubernetes resource vendor (for example nvidia.com)", name, name)
		}
		amount := c.get("spark.driver.resource." + key)
		q, err := resource.ParseQuantity(strings.TrimSpace(amount))
		if err != nil {
			return buildErrorf("spark.driver.resource.%s: %q is not a quantity", key, amount)
		}
		res.Limits[corev1.ResourceName(vendor+"/"+name)] = q
	}
	if len(res.Limits) == 0 {
		res.Limits = nil
	}
	return nil
}

// mountSecrets is Spark's MountSecretsFeatureStep: spark.kubernetes.driver.secrets.<name>=<path>.
func (d *driverPodBuild) mountSecrets() {
	secrets := prefixed(d.conf, "spark.kubernetes.driver.secrets.")
	for _, name := range sortedKeys(secrets) {
		vol := boundedVolumeName(name, "-volume")
		d.addVolume(
			corev1.Volume{Name: vol, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}},
			corev1.VolumeMount{Name: vol, MountPath: secrets[name]},
		)
	}
}

// envSecrets is Spark's EnvSecretsFeatureStep: spark.kubernetes.driver.secretKeyRef.<ENV>=<secret>:<key>.
func (d *driverPodBuild) envSecrets() error {
	refs := prefixed(d.conf, "spark.kubernetes.driver.secretKeyRef.")
	for _, env := range sortedKeys(refs) {
		name, key, ok := strings.Cut(refs[env], ":")
		if !ok {
			return buildErrorf("spark.kubernetes.driver.secretKeyRef.%s must be <secret>:<key>, got %q", env, refs[env])
		}
		d.addEnv(corev1.EnvVar{Name: env, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key},
		}})
	}
	return nil
}

// driverCommand is Spark's DriverCommandFeatureStep: the arguments the image's entrypoint turns
// into an in-pod spark-submit. Before Spark 3.1 the entrypoint had separate Python and R modes
// that read the resource and arguments from the environment.
func (d *driverPodBuild) driverCommand() {
	s := d.spec
	resource := "spark-internal"
	if s.MainApplicationFile != nil && *s.MainApplicationFile != "" {
		resource = *s.MainApplicationFile
	}
	mainClass := ""
	if s.MainClass != nil {
		mainClass = *s.MainClass
	}
	mode := "driver"
	switch s.Type {
	case v1beta2.SparkApplicationTypePython:
		mainClass = pythonRunner
		if python := d.conf.get("spark.pyspark.python"); python != "" {
			d.addEnv(corev1.EnvVar{Name: "PYSPARK_PYTHON", Value: python})
		}
		if python := firstNonEmpty(d.conf.get("spark.pyspark.driver.python"), d.conf.get("spark.pyspark.python")); python != "" {
			d.addEnv(corev1.EnvVar{Name: "PYSPARK_DRIVER_PYTHON", Value: python})
		}
		if !d.version.atLeast(3, 1) {
			mode = "driver-py"
			major := firstNonEmpty(d.conf.get("spark.kubernetes.pyspark.pythonVersion"), map[bool]string{true: "3", false: "2"}[d.version.atLeast(3, 0)])
			d.addEnv(
				corev1.EnvVar{Name: "PYSPARK_PRIMARY", Value: resolveLocal(resource)},
				corev1.EnvVar{Name: "PYSPARK_MAJOR_PYTHON_VERSION", Value: major},
			)
			if len(s.Deps.PyFiles) > 0 {
				files := make([]string, len(s.Deps.PyFiles))
				for i, f := range s.Deps.PyFiles {
					files[i] = resolveLocal(f)
				}
				d.addEnv(corev1.EnvVar{Name: "PYSPARK_FILES", Value: strings.Join(files, ":")})
			}
			if len(s.Arguments) > 0 {
				d.addEnv(corev1.EnvVar{Name: "PYSPARK_APP_ARGS", Value: strings.Join(s.Arguments, " ")})
			}
		}
	case v1beta2.SparkApplicationTypeR:
		mainClass = rRunner
		if !d.version.atLeast(3, 1) {
			mode = "driver-r"
			d.addEnv(corev1.EnvVar{Name: "R_PRIMARY", Value: resolveLocal(resource)})
			if len(s.Arguments) > 0 {
				d.addEnv(corev1.EnvVar{Name: "R_APP_ARGS", Value: strings.Join(s.Arguments, " ")})
			}
		}
	}
	args := []string{mode}
	if s.ProxyUser != nil && *s.ProxyUser != "" {
		args = append(args, "--proxy-user", *s.ProxyUser)
	}
	args = append(args, "--properties-file", propertiesPath)
	if mainClass != "" {
		// Without --class the in-pod spark-submit reads Main-Class from the jar's manifest,
		// which it can, because local:// jars are on its own file system.
		args = append(args, "--class", mainClass)
	}
	if mode == "driver" {
		args = append(args, resource)
		args = append(args, s.Arguments...)
	}
	d.container().Args = args
}

// resolveLocal turns local:// URIs into the path inside the image, as Spark's
// KubernetesUtils.resolveFileUri does for the pre-3.1 entrypoint.
func resolveLocal(uri string) string {
	if p, ok := strings.CutPrefix(uri, "local://"); ok {
		return p
	}
	return uri
}

// podTemplateVolume is Spark's PodTemplateConfigMapStep: the executor pod template, mounted
// where spark.kubernetes.executor.podTemplateFile points.
func (d *driverPodBuild) podTemplateVolume() {
	if d.executorPodTemplate == nil {
		return
	}
	d.addVolume(
		configMapVolume(podTemplateVolumeName, d.objs.ConfigMap.Name, corev1.KeyToPath{Key: executorTemplateKey, Path: podTemplateFile, Mode: mode0644()}),
		corev1.VolumeMount{Name: podTemplateVolumeName, MountPath: podTemplateDir},
	)
}

// customize merges the driver customizations (spec.driver env, volumes, affinity, sidecars...)
// with the webhook's rules.
func (d *driverPodBuild) customize() {
	mutate.ApplyCustomization(d.pod, d.customization(d.driverRole()))
}

// mountConfVolumes is Spark's MountVolumesFeatureStep for the driver: the volumes of
// spark.kubernetes.driver.volumes.* (validation has refused any it cannot build). The executors'
// are Spark's own to mount, from the same properties.
func (d *driverPodBuild) mountConfVolumes() {
	volumes, mounts, _ := v1beta2.ConfVolumes(d.spec.SparkConf, v1beta2.DriverVolumesPrefix, nil)
	for i := range volumes {
		d.addVolume(volumes[i], mounts[i])
	}
}

// privilegeEscalation follows Spark 4.3, whose BasicDriverFeatureStep sets the driver
// container's allowPrivilegeEscalation from spark.kubernetes.driver.securityContext.
// allowPrivilegeEscalation (falling back to spark.kubernetes.securityContext.
// allowPrivilegeEscalation, default false), over the template's. spec.driver.securityContext is
// applied after Spark, as Kubeflow's webhook does, so a value it sets explicitly decides.
func (d *driverPodBuild) privilegeEscalation() {
	if !d.version.atLeast(4, 3) {
		return
	}
	if sc := d.spec.Driver.SecurityContext; sc != nil && sc.AllowPrivilegeEscalation != nil {
		return
	}
	ctr := d.container()
	if ctr.SecurityContext == nil {
		ctr.SecurityContext = &corev1.SecurityContext{}
	}
	allow := allowPrivilegeEscalation(d.conf, "driver")
	ctr.SecurityContext.AllowPrivilegeEscalation = &allow
}

// allowPrivilegeEscalation is Spark 4.3's setting for a role's containers.
func allowPrivilegeEscalation(c properties, role string) bool {
	v := firstNonEmpty(
		c.get("spark.kubernetes."+role+".securityContext.allowPrivilegeEscalation"),
		c.get("spark.kubernetes.securityContext.allowPrivilegeEscalation"),
	)
	return strings.EqualFold(strings.TrimSpace(v), "true")
}

// localDirs is Spark's LocalDirsFeatureStep: scratch space for shuffle and spill, unless the
// Pod already mounts spark-local-dir-* volumes, which then serve instead.
func (d *driverPodBuild) localDirs() {
	ctr := d.container()
	var dirs []string
	for _, m := range ctr.VolumeMounts {
		if strings.HasPrefix(m.Name, localDirPrefix) {
			dirs = append(dirs, m.MountPath)
		}
	}
	if len(dirs) == 0 {
		dirs = splitList(d.conf.get("spark.local.dir"))
		if len(dirs) == 0 {
			sum := sha256.Sum256([]byte(d.sub.AppID))
			dirs = []string{defaultLocalDirParent + "/spark-" + formatUUID(sum[:16])}
		}
		medium := corev1.StorageMediumDefault
		if strings.EqualFold(d.conf.get("spark.kubernetes.local.dirs.tmpfs"), "true") {
			medium = corev1.StorageMediumMemory
		}
		for i, dir := range dirs {
			name := localDirPrefix + strconv.Itoa(i+1)
			d.addVolume(
				corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium}}},
				corev1.VolumeMount{Name: name, MountPath: dir},
			)
		}
	}
	d.addEnv(corev1.EnvVar{Name: "SPARK_LOCAL_DIRS", Value: strings.Join(dirs, ",")})
}

// confVolume mounts spark.properties at /opt/spark/conf, as spark-submit's Client does after
// the feature steps.
func (d *driverPodBuild) confVolume() {
	d.addVolume(
		configMapVolume(confVolumeName, d.objs.ConfigMap.Name, corev1.KeyToPath{Key: propertiesFile, Path: propertiesFile, Mode: mode0644()}),
		corev1.VolumeMount{Name: confVolumeName, MountPath: sparkConfDir},
	)
	confDir := sparkConfDir
	if d.spec.SparkConfigMap != nil && *d.spec.SparkConfigMap != "" {
		// The user's ConfigMap holds the other configuration files (log4j2.properties, ...);
		// spark.properties is read from its own path all the same.
		confDir = userSparkConfDir
	}
	d.addEnv(corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: confDir})
}

func mode0644() *int32 {
	m := int32(0o644)
	return &m
}

// prefixed returns the properties under prefix, with the prefix removed; nil when there are
// none, which is the common case and costs nothing.
func prefixed(c properties, prefix string) map[string]string {
	var out map[string]string
	for k, v := range c {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[rest] = v
		}
	}
	return out
}

func substituteAppID(m map[string]string, appID string) {
	for k, v := range m {
		if strings.Contains(v, "{{APP_ID}}") {
			m[k] = strings.ReplaceAll(v, "{{APP_ID}}", appID)
		}
	}
}

// merge sets every entry of add on base (a nil base is created), and returns it.
func merge(base, add map[string]string) map[string]string {
	if len(add) == 0 {
		return base
	}
	if base == nil {
		base = make(map[string]string, len(add))
	}
	for k, v := range add {
		base[k] = v
	}
	return base
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// boundedVolumeName is name+suffix as a valid volume name (a DNS-1123 label), sanitised and
// hash-shortened when the plain form is not one.
func boundedVolumeName(name, suffix string) string {
	plain := name + suffix
	if len(validation.IsDNS1123Label(plain)) == 0 {
		return plain
	}
	sum := sha256.Sum256([]byte(name))
	hash := "-" + hex.EncodeToString(sum[:])[:shortHashLen]
	base := sanitizeLabelValue(name)
	if keep := maxLabelName - len(hash) - len(suffix); len(base) > keep {
		base = strings.TrimRight(base[:keep], "-")
	}
	return base + hash + suffix
}
