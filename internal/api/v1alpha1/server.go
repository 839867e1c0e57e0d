package v1alpha1

import (
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// The Spark Connect server's facts.
const (
	// ServerMainClass is the Spark Connect server's entry point, which the stock images'
	// start-connect-server.sh runs through spark-submit in client mode.
	ServerMainClass = "org.apache.spark.sql.connect.service.SparkConnectServer"
	// GRPCPort is where the server listens; the Kubeflow SDK hard-codes it.
	GRPCPort = 15002
	// ServerContainer and ExecutorContainer are the template containers Spark uses.
	ServerContainer   = "spark-kubernetes-driver"
	ExecutorContainer = "spark-kubernetes-executor"
	// MaxNameLength leaves room for the -server suffix in a 63-character name, as Kubeflow's
	// validator does.
	MaxNameLength = 56
)

// ServerPodName is the server Pod's name, which clients read from status.server.podName.
func ServerPodName(sc *SparkConnect) string { return sc.Name + "-server" }

// ServiceName is the name of the Service clients connect to.
func ServiceName(sc *SparkConnect) string {
	if svc := sc.Spec.Server.Service; svc != nil && svc.Name != "" {
		return svc.Name
	}
	return sc.Name + "-server"
}

// ServerApplication is the SparkApplication the server is built as: a driver whose main class
// is the Spark Connect server, which the driver entrypoint of the stock images runs with
// spark-submit in client mode, inside its own Pod. Building it with the SparkApplication
// builder gives the server the same properties file, memory rules and pod customization as a
// driver, and its executors the same template. The Kubeflow facts kept: the image of the
// selected template container wins over spec.image; spark.kubernetes.driver.pod.name from
// sparkConf is dropped (the Pod is <name>-server); the server restarts whenever it stops.
func ServerApplication(sc *SparkConnect) *v1beta2.SparkApplication {
	conf := maps.Clone(sc.Spec.SparkConf)
	delete(conf, "spark.kubernetes.driver.pod.name")
	spec := v1beta2.SparkApplicationSpec{
		Type:         v1beta2.SparkApplicationTypeScala,
		Mode:         v1beta2.DeployModeCluster,
		SparkVersion: sc.Spec.SparkVersion,
		Image:        sc.Spec.Image,
		MainClass:    ptr.To(ServerMainClass),
		SparkConf:    conf,
		HadoopConf:   maps.Clone(sc.Spec.HadoopConf),
		RestartPolicy: v1beta2.RestartPolicy{
			Type: v1beta2.RestartPolicyAlways,
		},
		DynamicAllocation: sc.Spec.DynamicAllocation.DeepCopy(),
	}
	spec.Driver.SparkPodSpec = rolePodSpec(&sc.Spec.Server.SparkPodSpec, ServerContainer)
	spec.Driver.PodName = ptr.To(ServerPodName(sc))
	spec.Driver.ServiceAccount = sc.Spec.Server.ServiceAccount
	spec.Executor.SparkPodSpec = rolePodSpec(&sc.Spec.Executor.SparkPodSpec, ExecutorContainer)
	spec.Executor.Instances = sc.Spec.Executor.Instances
	return &v1beta2.SparkApplication{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindSparkApplication},
		ObjectMeta: *sc.ObjectMeta.DeepCopy(),
		Spec:       spec,
	}
}

func rolePodSpec(ps *SparkPodSpec, container string) v1beta2.SparkPodSpec {
	out := v1beta2.SparkPodSpec{Cores: ps.Cores, Memory: ps.Memory, Template: ps.Template.DeepCopy()}
	if c := selectedContainer(ps.Template, container); c != nil && c.Image != "" {
		out.Image = ptr.To(c.Image)
	}
	return out
}

// selectedContainer is the template container Kubeflow takes the image from: the one Spark
// uses by name, else the first.
func selectedContainer(t *corev1.PodTemplateSpec, name string) *corev1.Container {
	if t == nil || len(t.Spec.Containers) == 0 {
		return nil
	}
	for i := range t.Spec.Containers {
		if t.Spec.Containers[i].Name == name {
			return &t.Spec.Containers[i]
		}
	}
	return &t.Spec.Containers[0]
}

// ValidateSparkConnect checks a SparkConnect as the hooks and the admission webhook do: the
// rules of its own (name length, Service name) and, on the SparkApplication it is built as,
// every rule a SparkApplication has, reported at the SparkConnect's field paths.
func ValidateSparkConnect(sc *SparkConnect) field.ErrorList {
	var errs field.ErrorList
	if n := len(sc.Name); n > MaxNameLength {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), sc.Name, MaxNameLength))
	}
	if svc := sc.Spec.Server.Service; svc != nil && svc.Name != "" {
		for _, msg := range validation.IsDNS1035Label(svc.Name) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "server", "service", "metadata", "name"), svc.Name, msg))
		}
	}
	server := field.NewPath("spec", "server")
	errs = append(errs, v1beta2.ValidateGRPCRouteConfiguration(sc.Spec.Server.GRPCRoute, server.Child("grpcRoute"))...)
	errs = append(errs, v1beta2.ValidateHTTPRouteConfiguration(sc.Spec.Server.HTTPRoute, server.Child("httpRoute"))...)
	app := ServerApplication(sc)
	v1beta2.SetSparkApplicationDefaults(app)
	imageMissing := false
	for _, e := range v1beta2.ValidateSparkApplication(app) {
		if e.Type == field.ErrorTypeRequired && (e.Field == "spec.driver.image" || e.Field == "spec.executor.image") {
			// A role image is not a SparkConnect field; the template container's is.
			if !imageMissing {
				imageMissing = true
				errs = append(errs, field.Required(field.NewPath("spec", "image"),
					"set spec.image, or an image on the server and executor template containers (spark-kubernetes-driver and spark-kubernetes-executor, else the first container)"))
			}
			continue
		}
		e := *e
		e.Field = serverPath(e.Field)
		if strings.Contains(e.Detail, "spec.driver.") {
			e.Detail = strings.ReplaceAll(e.Detail, "spec.driver.", "spec.server.")
		}
		errs = append(errs, &e)
	}
	return errs
}

// serverPath names a field of the SparkApplication the server is built as by the SparkConnect
// field it comes from.
func serverPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "spec.driver"); ok {
		return "spec.server" + rest
	}
	return p
}
