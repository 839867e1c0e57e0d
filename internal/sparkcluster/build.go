package sparkcluster

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
)

// Labels, Apache's names.
const (
	LabelClusterName  = "spark.operator/spark-cluster-name"
	LabelSparkRole    = "spark-role"
	LabelSparkVersion = "spark-version"
	// AnnotationInitWorkers records on an autoscaled worker StatefulSet the initWorkers it was
	// answered for, so that an edit of initWorkers can be told from the autoscaler's scaling.
	AnnotationInitWorkers = "sparkhooks.io/init-workers"
	roleMaster            = "master"
	roleWorker            = "worker"
)

// Ports of the daemons.
const (
	masterWebPort  = 8080
	masterPort     = 7077
	masterRESTPort = 6066
	workerWebPort  = 8081
)

// gracePeriod lets a worker tell the master it is going; Apache forces 0.
const gracePeriod = 30

// objects are the desired children of a cluster.
type objects struct {
	master, worker       *appsv1.StatefulSet
	masterSvc, workerSvc *corev1.Service
	policy               *networkingv1.NetworkPolicy
	hpa                  *autoscalingv2.HorizontalPodAutoscaler
	pdb                  *policyv1.PodDisruptionBudget
}

// list is every child in a fixed order.
func (o *objects) list() []any {
	out := []any{o.masterSvc, o.workerSvc, o.master, o.worker, o.policy}
	if o.hpa != nil {
		out = append(out, o.hpa)
	}
	if o.pdb != nil {
		out = append(out, o.pdb)
	}
	return out
}

// MasterURL is where applications reach the cluster.
func MasterURL(c *sparkv1.SparkCluster) string {
	return fmt.Sprintf("spark://%s:%d", masterService(c), masterPort)
}

// masterService is the name of the Service workers and applications reach the master by.
func masterService(c *sparkv1.SparkCluster) string { return c.Name + "-master-svc" }

func build(c *sparkv1.SparkCluster) *objects {
	ms, ws := c.Spec.MasterSpec, c.Spec.WorkerSpec
	if ms == nil {
		ms = &sparkv1.MasterSpec{}
	}
	if ws == nil {
		ws = &sparkv1.WorkerSpec{}
	}
	conf := effectiveConf(c)
	o := &objects{}
	o.masterSvc = service(c, roleMaster, ms.ServiceMetadata, ms.ServiceSpec, []corev1.ServicePort{
		servicePort("web", masterWebPort), servicePort("spark", masterPort), servicePort("rest", masterRESTPort),
	})
	o.workerSvc = service(c, roleWorker, ws.ServiceMetadata, ws.ServiceSpec, []corev1.ServicePort{servicePort("web", workerWebPort)})
	o.master = statefulSet(c, roleMaster, ms.StatefulSetMetadata, ms.StatefulSetSpec, 1, conf)
	o.worker = statefulSet(c, roleWorker, ws.StatefulSetMetadata, ws.StatefulSetSpec, c.Spec.ClusterTolerations.InstanceConfig.InitWorkers, conf)
	o.policy = workerPolicy(c)
	ic := c.Spec.ClusterTolerations.InstanceConfig
	if ic.MinWorkers < ic.MaxWorkers {
		o.hpa = autoscaler(c, ws.HorizontalPodAutoscalerSpec)
		// The autoscaler owns the running count once the pool is made (see workerReplicas).
		if o.worker.Annotations == nil {
			o.worker.Annotations = map[string]string{}
		}
		o.worker.Annotations[AnnotationInitWorkers] = strconv.Itoa(int(ic.InitWorkers))
	}
	if ic.MinWorkers >= 1 {
		o.pdb = disruptionBudget(c)
	}
	return o
}

func name(c *sparkv1.SparkCluster, suffix string) string { return c.Name + "-" + suffix }

func selector(c *sparkv1.SparkCluster, role string) map[string]string {
	return map[string]string{LabelClusterName: c.Name, LabelSparkRole: role}
}

// labels are the labels of every object of a role: the user's, then the cluster's.
func labels(c *sparkv1.SparkCluster, role string, user map[string]string) map[string]string {
	out := maps.Clone(user)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, selector(c, role))
	out[LabelSparkVersion] = c.Spec.RuntimeVersions.SparkVersion
	return out
}

func objectMeta(c *sparkv1.SparkCluster, objName, role string, base *metav1.ObjectMeta) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: objName, Namespace: c.Namespace}
	var userLabels map[string]string
	if base != nil {
		userLabels = base.Labels
		m.Annotations = maps.Clone(base.Annotations)
	}
	m.Labels = labels(c, role, userLabels)
	return m
}

func servicePort(portName string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: portName, Port: port, TargetPort: intstr.FromString(portName), Protocol: corev1.ProtocolTCP}
}

// service is a role's Service: headless as Apache makes it, unless the user asks for a
// NodePort or LoadBalancer, which need a cluster IP.
func service(c *sparkv1.SparkCluster, role string, meta *metav1.ObjectMeta, spec *corev1.ServiceSpec, ports []corev1.ServicePort) *corev1.Service {
	svc := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: objectMeta(c, name(c, role+"-svc"), role, meta)}
	if spec != nil {
		svc.Spec = *spec.DeepCopy()
	}
	if svc.Spec.Type == "" || svc.Spec.Type == corev1.ServiceTypeClusterIP {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	if svc.Spec.Selector == nil {
		svc.Spec.Selector = map[string]string{}
	}
	maps.Copy(svc.Spec.Selector, selector(c, role))
	svc.Spec.Ports = append(svc.Spec.Ports, ports...)
	return svc
}

// statefulSet is a role's StatefulSet, merged from the user's template: the daemon's container
// (found by name, else appended) gets the image, the command, the conf, the ports and probes.
func statefulSet(c *sparkv1.SparkCluster, role string, meta *metav1.ObjectMeta, base *appsv1.StatefulSetSpec, replicas int32, conf map[string]string) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: objectMeta(c, name(c, role), role, meta)}
	if base != nil {
		sts.Spec = *base.DeepCopy()
	}
	s := &sts.Spec
	s.Replicas = ptr.To(replicas)
	s.PodManagementPolicy = appsv1.ParallelPodManagement
	s.ServiceName = name(c, role+"-svc")
	if s.Selector == nil {
		s.Selector = &metav1.LabelSelector{}
	}
	if s.Selector.MatchLabels == nil {
		s.Selector.MatchLabels = map[string]string{}
	}
	maps.Copy(s.Selector.MatchLabels, selector(c, role))

	pod := &s.Template
	pod.Labels = labels(c, role, pod.Labels)
	maps.Copy(pod.Labels, s.Selector.MatchLabels)
	if sched := conf["spark.kubernetes.scheduler.name"]; sched != "" {
		pod.Spec.SchedulerName = sched
	}
	if pod.Spec.TerminationGracePeriodSeconds == nil {
		pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](gracePeriod)
	}
	if role == roleWorker {
		dns := pod.Spec.DNSConfig
		if dns == nil {
			dns = &corev1.PodDNSConfig{}
			pod.Spec.DNSConfig = dns
		}
		// The master and drivers reach a worker by its Pod hostname.
		dns.Searches = append(dns.Searches, fmt.Sprintf("%s.%s.svc.cluster.local", name(c, "worker-svc"), c.Namespace))
	}
	daemon(c, role, pod, conf)
	return sts
}

// daemon readies the role's container: the Spark daemon in the foreground (the container's
// life is the daemon's), its -D conf, ports, and probes that need no access to its web UI.
func daemon(c *sparkv1.SparkCluster, role string, pod *corev1.PodTemplateSpec, conf map[string]string) {
	var ctr *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == role {
			ctr = &pod.Spec.Containers[i]
		}
	}
	if ctr == nil {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: role})
		ctr = &pod.Spec.Containers[len(pod.Spec.Containers)-1]
	}
	ctr.Image = conf["spark.kubernetes.container.image"]
	opts := javaOptions(conf)
	webPort := int32(masterWebPort)
	var ports []corev1.ContainerPort
	var env []corev1.EnvVar
	if role == roleMaster {
		// The address sbin/start-master.sh advertises: the Pod's name under its StatefulSet's
		// Service. Without --host the master would advertise its Pod IP.
		ctr.Command = daemonCommand("", "org.apache.spark.deploy.master.Master",
			`--host "${SPARK_MASTER_HOST:-$(hostname -f 2>/dev/null || hostname)}"`,
			fmt.Sprintf("--port %d --webui-port %d", masterPort, masterWebPort))
		env = append(env, corev1.EnvVar{Name: "SPARK_MASTER_OPTS", Value: opts})
		ports = []corev1.ContainerPort{
			{Name: "web", ContainerPort: masterWebPort, Protocol: corev1.ProtocolTCP},
			{Name: "spark", ContainerPort: masterPort, Protocol: corev1.ProtocolTCP},
			{Name: "rest", ContainerPort: masterRESTPort, Protocol: corev1.ProtocolTCP},
		}
	} else {
		webPort = workerWebPort
		ctr.Command = daemonCommand(untilMasterAnswers(c), "org.apache.spark.deploy.worker.Worker",
			fmt.Sprintf("--webui-port %d", workerWebPort), MasterURL(c))
		env = append(env, corev1.EnvVar{Name: "SPARK_WORKER_OPTS", Value: opts})
		ports = []corev1.ContainerPort{{Name: "web", ContainerPort: workerWebPort, Protocol: corev1.ProtocolTCP}}
	}
	ctr.Args = nil
	ctr.Env = append(withoutEnv(ctr.Env, env), env...)
	ctr.Ports = append(withoutPorts(ctr.Ports, ports), ports...)
	answers := uiAnswers(webPort)
	if ctr.ReadinessProbe == nil {
		// Often at first, since the cluster is not RunningHealthy before the last daemon is
		// ready, and workers reach the master only through its Service, whose endpoint waits
		// for the master's readiness. The master's is a TCP connect, which the kubelet makes
		// itself; a worker's runs a bash.
		ready := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(webPort)}},
			PeriodSeconds: 2, TimeoutSeconds: 2, FailureThreshold: 3}
		if role == roleWorker {
			ready = &corev1.Probe{ProbeHandler: connectedToMaster, PeriodSeconds: 3, TimeoutSeconds: 2, FailureThreshold: 3}
		}
		ctr.ReadinessProbe = ready
	}
	if ctr.LivenessProbe == nil {
		ctr.LivenessProbe = &corev1.Probe{ProbeHandler: answers, InitialDelaySeconds: 30, PeriodSeconds: 20, TimeoutSeconds: 5, FailureThreshold: 6}
	}
	if ctr.SecurityContext == nil {
		ctr.SecurityContext = &corev1.SecurityContext{}
	}
	if ctr.SecurityContext.AllowPrivilegeEscalation == nil {
		ctr.SecurityContext.AllowPrivilegeEscalation = ptr.To(false)
	}
}

// daemonCommand runs a standalone daemon as the container's main process, with what
// sbin/start-master.sh and start-worker.sh set up (spark-config.sh; spark-class reads
// spark-env.sh and the *_OPTS), but not through sbin/spark-daemon.sh: in the foreground
// (SPARK_NO_DAEMONIZE) that script keeps the JVM as its child, so the container's first process
// is a bash that ignores SIGTERM, a deleted Pod's daemon never hears of it and the kubelet kills
// it after the whole grace period. spark-class execs the JVM, which handles SIGTERM: a worker
// stops its executors and leaves the master at once. before, when not empty, is a step of the
// script that ends in "&& " and runs first.
func daemonCommand(before, class string, args ...string) []string {
	return []string{"bash", "-c", before + fmt.Sprintf(`export SPARK_HOME="${SPARK_HOME:-/opt/spark}" && . "$SPARK_HOME/sbin/spark-config.sh" && exec "$SPARK_HOME/bin/spark-class" %s %s`, class, strings.Join(args, " "))}
}

// The probes use only bash and its builtins (/dev/tcp, read): bash is what Spark's sbin scripts
// run on, so every image that starts a daemon has it, while curl and wget are not in every image.
// None of them needs the web UI to let it in: spark.ui.filters (a JWSFilter, say) answers an
// unauthenticated request with 403, which an HTTP probe counts as a failure, so a cluster with a
// filter was killed over and over.

// uiAnswers passes when the daemon's web UI answers an HTTP request with any status: the JVM is
// up and serving, whether or not a filter lets the probe in.
func uiAnswers(port int32) corev1.ProbeHandler {
	return corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", fmt.Sprintf(
		`exec 3<>/dev/tcp/"$HOSTNAME"/%d && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && IFS= read -r -t 4 line <&3 && [[ $line == HTTP/* ]]`,
		port)}}}
}

// untilMasterAnswers starts a worker's daemon only once the master's RPC port takes connections.
// A worker started first tries to register at once, fails, and retries only 5 to 15 s later
// (Spark's fixed, fuzzed interval): about 20 s of a 1-master, 3-worker cluster's 33 s start were
// that wait here. The bash that waits is the container's first process, which ignores SIGTERM
// unless it traps it: a worker deleted while it waits stops at once.
func untilMasterAnswers(c *sparkv1.SparkCluster) string {
	return fmt.Sprintf(`trap 'exit 143' TERM; until (exec 3<>/dev/tcp/%s/%d) 2>/dev/null; do sleep 1; done && `, masterService(c), masterPort)
}

// connectedToMaster is a worker's readiness: it holds an open connection to a master's RPC port.
// A worker binds its UI first, then registers, retrying every 5-15 s while no master is
// reachable, so a probe of the UI alone made the cluster RunningHealthy before the master had
// its workers. The worker registers over that connection and keeps it for its heartbeats, so it
// is open from registration on, and closed while the worker has lost its master. The kernel's
// table of the Pod's connections (/proc/net/tcp, tcp6) shows it: remote port 7077 (hex 1BA5),
// state 01 (established).
var connectedToMaster = corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"bash", "-c", fmt.Sprintf(
	`for table in /proc/net/tcp /proc/net/tcp6; do [[ -r $table ]] || continue; `+
		`while read -r _ _ remote state _; do [[ $remote == *:%04X && $state == 01 ]] && exit 0; done <"$table"; done; exit 1`,
	masterPort)}}}

// withoutEnv drops the user's entries the daemon sets, so that none appears twice.
func withoutEnv(env, set []corev1.EnvVar) []corev1.EnvVar {
	var out []corev1.EnvVar
	for _, e := range env {
		dup := false
		for _, s := range set {
			dup = dup || e.Name == s.Name
		}
		if !dup {
			out = append(out, e)
		}
	}
	return out
}

func withoutPorts(ports, set []corev1.ContainerPort) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range ports {
		dup := false
		for _, s := range set {
			dup = dup || p.Name == s.Name || p.ContainerPort == s.ContainerPort
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

// effectiveConf is the conf the daemons get, as Apache's operator derives it: the spec's, the
// image's {{SPARK_VERSION}} filled in, the namespace forced, and the external shuffle service on
// (Apache's default at HEAD). The image defaults to the stock one of the cluster's Spark
// version; Apache's default ignores the version.
func effectiveConf(c *sparkv1.SparkCluster) map[string]string {
	conf := map[string]string{"spark.shuffle.service.enabled": "true"}
	maps.Copy(conf, c.Spec.SparkConf)
	version := c.Spec.RuntimeVersions.SparkVersion
	image := conf["spark.kubernetes.container.image"]
	if image == "" {
		image = "apache/spark:" + version
	}
	conf["spark.kubernetes.container.image"] = strings.ReplaceAll(image, "{{SPARK_VERSION}}", version)
	conf["spark.kubernetes.namespace"] = c.Namespace
	return conf
}

// javaOptions renders conf as -D flags in key order, each value quoted for Spark's launcher,
// which splits SPARK_*_OPTS as a shell would.
func javaOptions(conf map[string]string) string {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(conf[k])
		parts[i] = fmt.Sprintf(`"-D%s=%s"`, k, v)
	}
	return strings.Join(parts, " ")
}

// workerPolicy admits to the workers only the cluster's own Pods and drivers (which fetch task
// results from the executors inside the workers), as Apache's does.
func workerPolicy(c *sparkv1.SparkCluster) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: objectMeta(c, name(c, roleWorker), roleWorker, nil),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector(c, roleWorker)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelClusterName: c.Name}}},
				{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelSparkRole: "driver"}}},
			}}},
		},
	}
}

// autoscaler scales the workers between minWorkers and maxWorkers: Apache's default metric
// (30% CPU of the worker container) and pace, or the user's metrics and behavior.
func autoscaler(c *sparkv1.SparkCluster, base *autoscalingv2.HorizontalPodAutoscalerSpec) *autoscalingv2.HorizontalPodAutoscaler {
	ic := c.Spec.ClusterTolerations.InstanceConfig
	spec := autoscalingv2.HorizontalPodAutoscalerSpec{
		Metrics: []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ContainerResourceMetricSourceType,
			ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
				Name: corev1.ResourceCPU, Container: roleWorker,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](30)},
			},
		}},
		Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
			ScaleUp:   &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}},
			ScaleDown: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 600}}},
		},
	}
	if base != nil {
		spec = *base.DeepCopy()
	}
	spec.MinReplicas = ptr.To(max(ic.MinWorkers, 1))
	spec.MaxReplicas = ic.MaxWorkers
	spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: name(c, roleWorker)}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: objectMeta(c, name(c, "worker-hpa"), roleWorker, nil),
		Spec:       spec,
	}
}

// disruptionBudget keeps one worker up through voluntary disruptions, as Apache's does.
func disruptionBudget(c *sparkv1.SparkCluster) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: objectMeta(c, name(c, "worker-pdb"), roleWorker, nil),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector:     &metav1.LabelSelector{MatchLabels: selector(c, roleWorker)},
		},
	}
}
