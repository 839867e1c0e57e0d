package sparkpod

import (
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsjson "sigs.k8s.io/json"
)

// CustomizationAnnotation carries a Customization on a pod. The sync hook writes it where it cannot
// shape the pod itself (Spark < 3.0 has no executor pod templates); the webhook applies it.
const CustomizationAnnotation = "sparkoperator.k8s.io/pod-customization"

// CustomizationVersion is the only annotation format this webhook understands.
const CustomizationVersion = 1

// MaxCustomizationBytes bounds an encoded customization. The API server allows 256 KiB for all
// annotations of an object together; half of that leaves room for everyone else's.
const MaxCustomizationBytes = 128 << 10

// Customization is what one SparkApplication asks of its driver or executor pods, in the field
// names of Kubeflow's SparkPodSpec. Container-level fields apply to the Spark container.
type Customization struct {
	// Version must be CustomizationVersion.
	Version int `json:"v"`

	Env          []corev1.EnvVar        `json:"env,omitempty"`
	EnvFrom      []corev1.EnvFromSource `json:"envFrom,omitempty"`
	Volumes      []corev1.Volume        `json:"volumes,omitempty"`
	VolumeMounts []corev1.VolumeMount   `json:"volumeMounts,omitempty"`
	Ports        []corev1.ContainerPort `json:"ports,omitempty"`
	GPU          *GPUSpec               `json:"gpu,omitempty"`
	// MemoryLimit raises the Spark container's memory limit above the request Spark sets (the
	// Kubeflow operator's memoryLimit). Spark overrides a pod template's memory limit, so for
	// executors only the webhook can apply it.
	MemoryLimit *resource.Quantity `json:"memoryLimit,omitempty"`
	Lifecycle   *corev1.Lifecycle  `json:"lifecycle,omitempty"`
	// SecurityContext is the Spark container's security context.
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	PodSecurityContext            *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	HostNetwork                   bool                       `json:"hostNetwork,omitempty"`
	HostAliases                   []corev1.HostAlias         `json:"hostAliases,omitempty"`
	InitContainers                []corev1.Container         `json:"initContainers,omitempty"`
	Sidecars                      []corev1.Container         `json:"sidecars,omitempty"`
	DNSConfig                     *corev1.PodDNSConfig       `json:"dnsConfig,omitempty"`
	PriorityClassName             string                     `json:"priorityClassName,omitempty"`
	SchedulerName                 string                     `json:"schedulerName,omitempty"`
	NodeSelector                  map[string]string          `json:"nodeSelector,omitempty"`
	Affinity                      *corev1.Affinity           `json:"affinity,omitempty"`
	Tolerations                   []corev1.Toleration        `json:"tolerations,omitempty"`
	TerminationGracePeriodSeconds *int64                     `json:"terminationGracePeriodSeconds,omitempty"`
	ShareProcessNamespace         bool                       `json:"shareProcessNamespace,omitempty"`
}

// GPUSpec asks for Quantity units of the extended resource Name (for example nvidia.com/gpu) as a
// limit on the Spark container, like Kubeflow's GPUSpec.
type GPUSpec struct {
	Name     string `json:"name"`
	Quantity int64  `json:"quantity"`
}

// EncodeCustomization returns the annotation value for c. A zero Version is taken as the current
// one; the result is compact JSON and deterministic for equal inputs.
func EncodeCustomization(c *Customization) (string, error) {
	if c == nil {
		return "", errors.New("encode pod customization: nil customization")
	}
	out := *c
	if out.Version == 0 {
		out.Version = CustomizationVersion
	}
	if err := out.validate(); err != nil {
		return "", fmt.Errorf("encode pod customization: %w", err)
	}
	data, err := json.Marshal(&out)
	if err != nil {
		return "", fmt.Errorf("encode pod customization: %w", err)
	}
	if len(data) > MaxCustomizationBytes {
		return "", fmt.Errorf("encode pod customization: %d bytes exceed the %d-byte limit", len(data), MaxCustomizationBytes)
	}
	return string(data), nil
}

// DecodeCustomization parses an annotation value. Unknown and duplicate fields are errors: a webhook
// that does not understand part of a customization refuses the pod rather than start it with part
// of what the application asked for silently missing.
func DecodeCustomization(value string) (*Customization, error) {
	if len(value) > MaxCustomizationBytes {
		return nil, fmt.Errorf("%d bytes exceed the %d-byte limit", len(value), MaxCustomizationBytes)
	}
	var c Customization
	strictErrs, err := sigsjson.UnmarshalStrict([]byte(value), &c)
	if err != nil || len(strictErrs) > 0 || c.Version != CustomizationVersion {
		// Say first what is wrong with the version: a newer format's fields are "unknown" here.
		if verr := checkVersion(value); verr != nil {
			return nil, verr
		}
		if err != nil {
			return nil, fmt.Errorf("decode: %w", err)
		}
		return nil, fmt.Errorf("decode: %w", errors.Join(strictErrs...))
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func checkVersion(value string) error {
	var probe struct {
		Version *int `json:"v"`
	}
	if err := json.Unmarshal([]byte(value), &probe); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if probe.Version == nil {
		return errors.New(`no format version ("v")`)
	}
	if *probe.Version != CustomizationVersion {
		return fmt.Errorf("format version %d is not supported (this webhook reads version %d)", *probe.Version, CustomizationVersion)
	}
	return nil
}

// validate checks what the merge relies on (names to deduplicate by, a usable GPU request); the
// API server validates the rest of the resulting pod.
func (c *Customization) validate() error {
	if c.Version != CustomizationVersion {
		return fmt.Errorf("format version %d is not supported (this webhook reads version %d)", c.Version, CustomizationVersion)
	}
	var errs []error
	for i, e := range c.Env {
		if e.Name == "" {
			errs = append(errs, fmt.Errorf("env[%d]: name is empty", i))
		}
	}
	for i, v := range c.Volumes {
		if v.Name == "" {
			errs = append(errs, fmt.Errorf("volumes[%d]: name is empty", i))
		}
	}
	for i, m := range c.VolumeMounts {
		if m.Name == "" || m.MountPath == "" {
			errs = append(errs, fmt.Errorf("volumeMounts[%d]: name and mountPath are required", i))
		}
	}
	for i, p := range c.Ports {
		if p.ContainerPort <= 0 {
			errs = append(errs, fmt.Errorf("ports[%d]: containerPort must be positive", i))
		}
	}
	if c.MemoryLimit != nil && c.MemoryLimit.Sign() <= 0 {
		errs = append(errs, errors.New("memoryLimit must be positive"))
	}
	if c.GPU != nil && (c.GPU.Name == "" || c.GPU.Quantity <= 0) {
		errs = append(errs, errors.New("gpu: name is required and quantity must be positive"))
	}
	for i, ctr := range c.InitContainers {
		if ctr.Name == "" {
			errs = append(errs, fmt.Errorf("initContainers[%d]: name is empty", i))
		}
	}
	for i, ctr := range c.Sidecars {
		if ctr.Name == "" {
			errs = append(errs, fmt.Errorf("sidecars[%d]: name is empty", i))
		}
	}
	return errors.Join(errs...)
}
