package sparkctl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

// LabelHadoopConfigFor marks a ConfigMap sparkctl made from a local Hadoop configuration, with
// the name of the application it was made for.
const LabelHadoopConfigFor = "sparkoperator.k8s.io/hadoop-config-for"

// maxConfigMapBytes is the API server's limit on a ConfigMap's data (1 MiB), less room for
// its metadata.
const maxConfigMapBytes = 1<<20 - 16<<10

// specPath is where a kind keeps its SparkApplication spec: runs of a schedule use its template.
func specPath(k kind) ([]string, bool) {
	switch k.Kind {
	case kindSparkApp.Kind:
		return []string{"spec"}, true
	case kindScheduled.Kind:
		return []string{"spec", "template"}, true
	}
	return nil, false
}

func hadoopConfigMapName(app string) string { return app + "-hadoop-config" }

// hadoopConfigMap reads the Hadoop configuration directory into a ConfigMap for obj and points
// spec.hadoopConfigMap at it; nil when there is no directory or the kind takes none.
func (c *cli) hadoopConfigMap(k kind, obj *unstructured.Unstructured, o *createOptions) (*corev1.ConfigMap, error) {
	path, ok := specPath(k)
	if o.hadoopConfDir == "" || !ok {
		return nil, nil
	}
	field := append(slices.Clone(path), "hadoopConfigMap")
	name := hadoopConfigMapName(obj.GetName())
	if existing, _, _ := unstructured.NestedString(obj.Object, field...); existing != "" && existing != name {
		fmt.Fprintf(c.env.Stderr, "%s already names hadoopConfigMap %q: %s is not used\n", obj.GetName(), existing, o.hadoopConfDir)
		return nil, nil
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return nil, fmt.Errorf("ConfigMap name %q for the Hadoop configuration: %s", name, errs[0])
	}
	cm, err := configMapFromDir(o.hadoopConfDir)
	if err != nil {
		return nil, err
	}
	cm.Name, cm.Namespace = name, obj.GetNamespace()
	cm.Labels = map[string]string{LabelHadoopConfigFor: obj.GetName()}
	if err := unstructured.SetNestedField(obj.Object, name, field...); err != nil {
		return nil, err
	}
	return cm, nil
}

// configMapFromDir makes a ConfigMap of the regular files in dir, as kubectl create configmap
// --from-file=DIR does: text files in data, others in binaryData, subdirectories skipped.
func configMapFromDir(dir string) (*corev1.ConfigMap, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the Hadoop configuration directory: %w", err)
	}
	cm := &corev1.ConfigMap{Data: map[string]string{}}
	total := 0
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		info, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("the Hadoop configuration directory: %w", err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		if errs := validation.IsConfigMapKey(e.Name()); len(errs) > 0 {
			return nil, fmt.Errorf("%s cannot be a ConfigMap key: %s", path, errs[0])
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("the Hadoop configuration directory: %w", err)
		}
		total += len(data)
		if utf8.Valid(data) {
			cm.Data[e.Name()] = string(data)
		} else {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[e.Name()] = data
		}
	}
	if len(cm.Data)+len(cm.BinaryData) == 0 {
		return nil, fmt.Errorf("the Hadoop configuration directory %s holds no file", dir)
	}
	if total > maxConfigMapBytes {
		return nil, fmt.Errorf("the Hadoop configuration directory %s holds %d bytes, more than a ConfigMap takes (1 MiB)", dir, total)
	}
	return cm, nil
}

// ownConfigMap makes the application the ConfigMap's owner, so it is deleted with it. The
// reference is not a controller reference: Metacontroller claims ConfigMaps its SparkApplication
// controls and deletes those the hook does not ask for.
func ownConfigMap(ctx context.Context, cl *Clients, owner *unstructured.Unstructured, name string) error {
	cm, err := getConfigMap(ctx, cl, owner.GetNamespace(), name)
	if err != nil {
		return fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	cm.OwnerReferences = append(cm.OwnerReferences, metav1.OwnerReference{
		APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(),
	})
	if err := updateConfigMap(ctx, cl, cm); err != nil {
		return fmt.Errorf("making %s %s the owner of ConfigMap %s: %w", owner.GetKind(), owner.GetName(), name, err)
	}
	return nil
}

// deleteOwnedHadoopConfig deletes the Hadoop ConfigMap an application sparkctl replaces owned,
// instead of racing the garbage collector for its name.
func (c *cli) deleteOwnedHadoopConfig(ctx context.Context, cl *Clients, ns, app string, uid types.UID) error {
	name := hadoopConfigMapName(app)
	cm, err := getConfigMap(ctx, cl, ns, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ConfigMap %s/%s: %w", ns, name, err)
	}
	if !slices.ContainsFunc(cm.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == uid }) {
		return nil
	}
	uidPre := cm.UID
	if err := deleteConfigMap(ctx, cl, ns, name, &uidPre); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting ConfigMap %s/%s of the deleted %s: %w", ns, name, app, err)
	}
	return nil
}
