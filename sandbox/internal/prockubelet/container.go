package prockubelet

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// containerLookups are what resolving a container's environment reads from the cluster.
type containerLookups struct {
	configMap func(name string) (*corev1.ConfigMap, error)
	secret    func(name string) (*corev1.Secret, error)
	// apiServerHost is the address pods reach the API server at (KUBERNETES_SERVICE_HOST).
	apiServerHost string
}

// resolvedContainer is a container as the runtime starts it.
type resolvedContainer struct {
	argv       []string
	env        []string
	workingDir string
	uid, gid   uint32
	groups     []uint32
}

// configError is a container that cannot be started as specified: CreateContainerConfigError.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

// resolveContainer computes the command, environment, working directory and user of c the way the
// kubelet and the container runtime do: image ENTRYPOINT/CMD unless the container overrides them,
// $(VAR) references expanded, env built from the image, envFrom, env and the kubelet's own.
func resolveContainer(pod *corev1.Pod, c *corev1.Container, image Image, lookups containerLookups) (*resolvedContainer, error) {
	envList, envMap, err := containerEnv(pod, c, image, lookups)
	if err != nil {
		return nil, err
	}
	var argv []string
	if len(c.Command) > 0 {
		argv = append(expandAll(c.Command, envMap), expandAll(c.Args, envMap)...)
	} else {
		argv = append([]string{}, image.Entrypoint...)
		if len(c.Args) > 0 {
			argv = append(argv, expandAll(c.Args, envMap)...)
		} else {
			argv = append(argv, image.Cmd...)
		}
	}
	if len(argv) == 0 {
		return nil, &configError{msg: fmt.Sprintf("container %s has no command and image %s has no entrypoint", c.Name, c.Image)}
	}
	uid, gid, err := containerUser(pod, c, image)
	if err != nil {
		return nil, err
	}
	if _, set := envMap["HOME"]; !set {
		envList = append(envList, "HOME="+homeOf(image, uid))
	}
	workingDir := c.WorkingDir
	if workingDir == "" {
		workingDir = image.WorkingDir
	}
	var groups []uint32
	if sc := pod.Spec.SecurityContext; sc != nil {
		if sc.FSGroup != nil {
			groups = append(groups, uint32(*sc.FSGroup))
		}
		for _, g := range sc.SupplementalGroups {
			groups = append(groups, uint32(g))
		}
	}
	return &resolvedContainer{argv: argv, env: envList, workingDir: workingDir, uid: uid, gid: gid, groups: groups}, nil
}

// homeOf is the HOME a container runtime gives a user the environment does not: the home in
// the passwd file the container sees (the image's, else the host's under it), "/" without one.
func homeOf(image Image, uid uint32) string {
	for _, passwd := range []string{filepath.Join(image.Root, "etc", "passwd"), "/etc/passwd"} {
		data, err := os.ReadFile(passwd)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Split(line, ":")
			if len(fields) >= 6 && fields[2] == strconv.FormatUint(uint64(uid), 10) && fields[5] != "" {
				return fields[5]
			}
		}
		return "/"
	}
	return "/"
}

// containerUser is the uid and gid the container runs as: the security context's (container
// over pod), else the image's USER. runAsNonRoot is checked as the kubelet checks it.
func containerUser(pod *corev1.Pod, c *corev1.Container, image Image) (uint32, uint32, error) {
	var runAsUser, runAsGroup *int64
	var runAsNonRoot *bool
	if sc := pod.Spec.SecurityContext; sc != nil {
		runAsUser, runAsGroup, runAsNonRoot = sc.RunAsUser, sc.RunAsGroup, sc.RunAsNonRoot
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			runAsUser = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			runAsGroup = sc.RunAsGroup
		}
		if sc.RunAsNonRoot != nil {
			runAsNonRoot = sc.RunAsNonRoot
		}
	}
	imageUID, imageGID := uint64(0), uint64(0)
	if image.User != "" {
		user, group, hasGroup := strings.Cut(image.User, ":")
		var err error
		if imageUID, err = strconv.ParseUint(user, 10, 32); err != nil {
			return 0, 0, &configError{msg: fmt.Sprintf("image %s has a non-numeric user %q", c.Image, image.User)}
		}
		imageGID = imageUID
		if hasGroup {
			if imageGID, err = strconv.ParseUint(group, 10, 32); err != nil {
				return 0, 0, &configError{msg: fmt.Sprintf("image %s has a non-numeric group %q", c.Image, image.User)}
			}
		}
	}
	uid, gid := uint32(imageUID), uint32(imageGID)
	if runAsUser != nil {
		// The image's group belongs to the image's user; another user gets group 0, as the
		// runtime finds no passwd entry for it.
		if uint64(*runAsUser) != imageUID {
			gid = 0
		}
		uid = uint32(*runAsUser)
	}
	if runAsGroup != nil {
		gid = uint32(*runAsGroup)
	}
	if runAsNonRoot != nil && *runAsNonRoot && uid == 0 {
		return 0, 0, &configError{msg: "container has runAsNonRoot and image will run as root"}
	}
	return uid, gid, nil
}

// containerEnv builds the environment: the image's, then the kubelet's service variables, then
// envFrom and env in order, later entries replacing earlier ones; env values may refer to the
// variables defined before them as $(NAME).
func containerEnv(pod *corev1.Pod, c *corev1.Container, image Image, lookups containerLookups) ([]string, map[string]string, error) {
	values := map[string]string{}
	var order []string
	set := func(name, value string) {
		if _, ok := values[name]; !ok {
			order = append(order, name)
		}
		values[name] = value
	}
	for _, kv := range image.Env {
		name, value, _ := strings.Cut(kv, "=")
		set(name, value)
	}
	hostname := pod.Name
	if pod.Spec.Hostname != "" {
		hostname = pod.Spec.Hostname
	}
	set("HOSTNAME", hostname)
	if lookups.apiServerHost != "" {
		for name, value := range map[string]string{
			"KUBERNETES_SERVICE_HOST":       lookups.apiServerHost,
			"KUBERNETES_SERVICE_PORT":       "443",
			"KUBERNETES_SERVICE_PORT_HTTPS": "443",
			"KUBERNETES_PORT":               "tcp://" + lookups.apiServerHost + ":443",
			"KUBERNETES_PORT_443_TCP":       "tcp://" + lookups.apiServerHost + ":443",
			"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
			"KUBERNETES_PORT_443_TCP_PORT":  "443",
			"KUBERNETES_PORT_443_TCP_ADDR":  lookups.apiServerHost,
		} {
			set(name, value)
		}
	}
	for _, from := range c.EnvFrom {
		data := map[string]string{}
		switch {
		case from.ConfigMapRef != nil:
			cm, err := lookups.configMap(from.ConfigMapRef.Name)
			if err != nil {
				if optional(from.ConfigMapRef.Optional) {
					continue
				}
				return nil, nil, &configError{msg: fmt.Sprintf("configmap %q not found", from.ConfigMapRef.Name)}
			}
			data = cm.Data
		case from.SecretRef != nil:
			secret, err := lookups.secret(from.SecretRef.Name)
			if err != nil {
				if optional(from.SecretRef.Optional) {
					continue
				}
				return nil, nil, &configError{msg: fmt.Sprintf("secret %q not found", from.SecretRef.Name)}
			}
			for k, v := range secret.Data {
				data[k] = string(v)
			}
		}
		for k, v := range data {
			set(from.Prefix+k, v)
		}
	}
	for _, e := range c.Env {
		value, skip, err := envValue(pod, c, e, values, lookups)
		if err != nil {
			return nil, nil, err
		}
		if !skip {
			set(e.Name, value)
		}
	}
	list := make([]string, 0, len(order))
	for _, name := range order {
		list = append(list, name+"="+values[name])
	}
	return list, values, nil
}

func envValue(pod *corev1.Pod, c *corev1.Container, e corev1.EnvVar, defined map[string]string, lookups containerLookups) (value string, skip bool, err error) {
	if e.ValueFrom == nil {
		return expand(e.Value, defined), false, nil
	}
	from := e.ValueFrom
	switch {
	case from.FieldRef != nil:
		v, err := fieldValue(pod, from.FieldRef.FieldPath)
		if err != nil {
			return "", false, &configError{msg: fmt.Sprintf("env %s: %v", e.Name, err)}
		}
		return v, false, nil
	case from.ResourceFieldRef != nil:
		v, err := resourceValue(c, from.ResourceFieldRef)
		if err != nil {
			return "", false, &configError{msg: fmt.Sprintf("env %s: %v", e.Name, err)}
		}
		return v, false, nil
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := lookups.configMap(ref.Name)
		if err != nil {
			if optional(ref.Optional) {
				return "", true, nil
			}
			return "", false, &configError{msg: fmt.Sprintf("configmap %q not found", ref.Name)}
		}
		v, ok := cm.Data[ref.Key]
		if !ok {
			if optional(ref.Optional) {
				return "", true, nil
			}
			return "", false, &configError{msg: fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)}
		}
		return v, false, nil
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		secret, err := lookups.secret(ref.Name)
		if err != nil {
			if optional(ref.Optional) {
				return "", true, nil
			}
			return "", false, &configError{msg: fmt.Sprintf("secret %q not found", ref.Name)}
		}
		v, ok := secret.Data[ref.Key]
		if !ok {
			if optional(ref.Optional) {
				return "", true, nil
			}
			return "", false, &configError{msg: fmt.Sprintf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)}
		}
		return string(v), false, nil
	}
	return "", true, nil
}

func optional(b *bool) bool { return b != nil && *b }

// fieldValue answers a downward-API field path.
func fieldValue(pod *corev1.Pod, path string) (string, error) {
	if key, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return pod.Labels[strings.TrimSuffix(key, "']")], nil
	}
	if key, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return pod.Annotations[strings.TrimSuffix(key, "']")], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.hostIPs":
		return joinIPs(pod.Status.HostIPs), nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.podIPs":
		var ips []string
		for _, ip := range pod.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		return strings.Join(ips, ","), nil
	}
	return "", fmt.Errorf("unsupported field path %q", path)
}

func joinIPs(ips []corev1.HostIP) string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.IP)
	}
	return strings.Join(out, ",")
}

func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s=%q", k, m[k]))
	}
	return strings.Join(lines, "\n")
}

// resourceValue answers a resourceFieldRef: the container's limit (or, without one, the node's
// capacity as the kubelet does; this kubelet reports the machine's), divided by the divisor and
// rounded up.
func resourceValue(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	source, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (source != "limits" && source != "requests") {
		return "", fmt.Errorf("unsupported resource %q", ref.Resource)
	}
	list := c.Resources.Limits
	if source == "requests" {
		list = c.Resources.Requests
	}
	quantity, found := list[corev1.ResourceName(name)]
	if !found {
		quantity = nodeCapacity(corev1.ResourceName(name))
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if name == "cpu" {
		return strconv.FormatInt(int64(math.Ceil(float64(quantity.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(quantity.Value())/float64(divisor.Value()))), 10), nil
}

// expand replaces $(NAME) with the value of a variable defined so far; $$ escapes a dollar, and
// a reference to an undefined variable stays as written, as in Kubernetes.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := vars[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func expandAll(in []string, vars map[string]string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vars)
	}
	return out
}

// nodeCapacity is what this node offers of a resource: the machine's CPUs, and a memory and
// storage figure large enough that a limit-less container is never squeezed by it.
func nodeCapacity(name corev1.ResourceName) resource.Quantity {
	switch name {
	case corev1.ResourceCPU:
		return *resource.NewQuantity(int64(runtime.NumCPU()), resource.DecimalSI)
	default:
		return resource.MustParse("64Gi")
	}
}
