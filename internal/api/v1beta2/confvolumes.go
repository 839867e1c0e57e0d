package v1beta2

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DriverVolumesPrefix starts the Spark properties that mount volumes in the driver
// (spark.kubernetes.driver.volumes.<type>.<name>.mount.path and the like). spark-submit turns
// them into the driver Pod's volumes in its MountVolumesFeatureStep; without spark-submit, the
// driver builder does, with ConfVolumes.
const DriverVolumesPrefix = "spark.kubernetes.driver.volumes."

// onDemandClaim is the claim name with which Spark creates a claim per pod. spark-submit makes
// the driver's itself; sparkhooks does not create claims, so a driver cannot ask for one.
const onDemandClaim = "OnDemand"

// ConfVolumes reads the volumes Spark properties under prefix declare, as Spark's
// KubernetesVolumeUtils does: <type>.<name>.mount.{path,readOnly,subPath,subPathExpr} and
// <type>.<name>.options.<option> for the types hostPath, emptyDir, nfs and
// persistentVolumeClaim, in name order. A property it cannot use is an error at its key.
func ConfVolumes(conf map[string]string, prefix string, fldPath *field.Path) ([]corev1.Volume, []corev1.VolumeMount, field.ErrorList) {
	type entry struct {
		kind, name string
		mount      corev1.VolumeMount
		options    map[string]string
		keys       []string
	}
	// Most applications mount nothing this way, and this runs on every sync.
	if !hasKeyWithPrefix(conf, prefix) {
		return nil, nil, nil
	}
	var errs field.ErrorList
	entries := map[string]*entry{}
	for _, key := range sortedKeys(conf) {
		value := conf[key]
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, ".", 4)
		if len(parts) != 4 || (parts[2] != "mount" && parts[2] != "options" && parts[2] != "label" && parts[2] != "annotation") {
			errs = append(errs, field.Invalid(fldPath.Key(key), value,
				"expected "+prefix+"<type>.<name>.mount.<path|readOnly|subPath|subPathExpr> or .options.<option>"))
			continue
		}
		id := parts[0] + "." + parts[1]
		e := entries[id]
		if e == nil {
			e = &entry{kind: parts[0], name: parts[1], mount: corev1.VolumeMount{Name: parts[1]}, options: map[string]string{}}
			entries[id] = e
		}
		e.keys = append(e.keys, key)
		switch parts[2] + "." + parts[3] {
		case "mount.path":
			e.mount.MountPath = value
		case "mount.readOnly":
			e.mount.ReadOnly = strings.EqualFold(strings.TrimSpace(value), "true")
		case "mount.subPath":
			e.mount.SubPath = value
		case "mount.subPathExpr":
			e.mount.SubPathExpr = value
		default:
			if parts[2] == "options" {
				e.options[parts[3]] = value
			}
			// Labels and annotations are for claims Spark creates, which a driver here does not have.
		}
	}
	ids := make([]string, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, id := range ids {
		e := entries[id]
		p := fldPath.Key(prefix + id + ".mount.path")
		if e.mount.MountPath == "" {
			errs = append(errs, field.Required(p, "every volume in "+prefix+" needs a mount path"))
			continue
		}
		source, err := confVolumeSource(e.kind, e.options)
		if err != nil {
			errs = append(errs, field.Invalid(fldPath.Key(prefix+id), e.kind, err.Error()))
			continue
		}
		volumes = append(volumes, corev1.Volume{Name: e.name, VolumeSource: source})
		mounts = append(mounts, e.mount)
	}
	return volumes, mounts, errs
}

func confVolumeSource(kind string, options map[string]string) (corev1.VolumeSource, error) {
	quantity := func(name string) (*resource.Quantity, error) {
		s, ok := options[name]
		if !ok || strings.TrimSpace(s) == "" {
			return nil, nil
		}
		q, err := resource.ParseQuantity(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("options.%s %q is not a quantity", name, s)
		}
		return &q, nil
	}
	readOnly := strings.EqualFold(strings.TrimSpace(options["readOnly"]), "true")
	switch kind {
	case "hostPath":
		if options["path"] == "" {
			return corev1.VolumeSource{}, fmt.Errorf("a hostPath volume needs options.path")
		}
		src := &corev1.HostPathVolumeSource{Path: options["path"]}
		if t := options["type"]; t != "" {
			typ := corev1.HostPathType(t)
			src.Type = &typ
		}
		return corev1.VolumeSource{HostPath: src}, nil
	case "emptyDir":
		size, err := quantity("sizeLimit")
		if err != nil {
			return corev1.VolumeSource{}, err
		}
		return corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMedium(options["medium"]), SizeLimit: size}}, nil
	case "nfs":
		if options["path"] == "" || options["server"] == "" {
			return corev1.VolumeSource{}, fmt.Errorf("an nfs volume needs options.path and options.server")
		}
		return corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: options["server"], Path: options["path"], ReadOnly: readOnly}}, nil
	case "persistentVolumeClaim":
		claim := options["claimName"]
		switch {
		case claim == "":
			return corev1.VolumeSource{}, fmt.Errorf("a persistentVolumeClaim volume needs options.claimName")
		case claim == onDemandClaim || strings.Contains(claim, "SPARK_EXECUTOR_ID"):
			return corev1.VolumeSource{}, fmt.Errorf("claim %q asks Spark to create a claim per pod, which sparkhooks does not do for the driver: create the PersistentVolumeClaim and name it here (executors may keep OnDemand claims, Spark's driver creates those)", claim)
		}
		return corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}, nil
	}
	return corev1.VolumeSource{}, fmt.Errorf("unknown volume type %q: Spark mounts hostPath, emptyDir, nfs and persistentVolumeClaim", kind)
}

func hasKeyWithPrefix(conf map[string]string, prefix string) bool {
	for key := range conf {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return false
}
