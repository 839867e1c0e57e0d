package prockubelet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// mountTmpfs backs a memory-medium emptyDir with tmpfs, as a kubelet does (Spark's
// spark.kubernetes.local.dirs.tmpfs and users' scratch volumes rely on it): mounted in the
// kubelet's mount namespace, the containers see it through their bind mounts of the volume.
// Volume setup is retried, so a volume that is tmpfs already is left as it is.
func mountTmpfs(path string, sizeLimit *resource.Quantity) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err == nil && fs.Type == unix.TMPFS_MAGIC {
		return nil
	}
	options := "mode=0777"
	if sizeLimit != nil && sizeLimit.Value() > 0 {
		options += fmt.Sprintf(",size=%d", sizeLimit.Value())
	}
	if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, options); err != nil {
		return fmt.Errorf("mount tmpfs at %s: %w", path, err)
	}
	return nil
}

// unmountVolumes detaches what mountTmpfs mounted under a pod's directory, before it goes.
func unmountVolumes(dir string) {
	entries, err := os.ReadDir(filepath.Join(dir, "volumes"))
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, "volumes", e.Name())
		var fs unix.Statfs_t
		if unix.Statfs(path, &fs) == nil && fs.Type == unix.TMPFS_MAGIC {
			_ = unix.Unmount(path, unix.MNT_DETACH)
		}
	}
}

// mountError is a volume that cannot be set up yet (a missing ConfigMap, say): the pod waits in
// ContainerCreating and the kubelet tries again, as a real kubelet does.
type mountError struct{ msg string }

func (e *mountError) Error() string { return e.msg }

// podVolumes are a pod's volumes as prepareVolumes set them up.
type podVolumes struct {
	// paths is the host directory of each volume by name.
	paths map[string]string
	// tokens are the service-account token files to keep fresh.
	tokens []*projectedToken
}

// prepareVolumes writes every volume of the pod under dir/volumes.
func (k *Kubelet) prepareVolumes(ctx context.Context, pod *corev1.Pod, dir string) (*podVolumes, error) {
	volumes := &podVolumes{paths: map[string]string{}}
	for _, v := range pod.Spec.Volumes {
		path := filepath.Join(dir, "volumes", v.Name)
		if err := os.MkdirAll(path, 0o755); err != nil {
			return nil, err
		}
		var err error
		switch {
		case v.EmptyDir != nil:
			err = os.Chmod(path, 0o777)
			if err == nil && v.EmptyDir.Medium == corev1.StorageMediumMemory {
				err = mountTmpfs(path, v.EmptyDir.SizeLimit)
			}
		case v.HostPath != nil:
			path = v.HostPath.Path
			if v.HostPath.Type != nil && *v.HostPath.Type == corev1.HostPathDirectoryOrCreate {
				err = os.MkdirAll(path, 0o755)
			} else if _, statErr := os.Stat(path); statErr != nil {
				err = &mountError{msg: fmt.Sprintf("hostPath %s of volume %s: %v", path, v.Name, statErr)}
			}
		case v.ConfigMap != nil:
			err = k.writeConfigMap(ctx, pod.Namespace, path, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.DefaultMode, v.ConfigMap.Optional)
		case v.Secret != nil:
			err = k.writeSecret(ctx, pod.Namespace, path, v.Secret.SecretName, v.Secret.Items, v.Secret.DefaultMode, v.Secret.Optional)
		case v.DownwardAPI != nil:
			err = writeDownwardAPI(pod, path, v.DownwardAPI.Items, v.DownwardAPI.DefaultMode)
		case v.Projected != nil:
			var tokens []*projectedToken
			tokens, err = k.writeProjected(ctx, pod, path, v)
			volumes.tokens = append(volumes.tokens, tokens...)
		default:
			err = &mountError{msg: fmt.Sprintf("volume %s: this kubelet supports emptyDir, hostPath, configMap, secret, downwardAPI and projected volumes", v.Name)}
		}
		if err == nil && v.HostPath == nil {
			err = applyFSGroup(pod, v, path)
		}
		if err != nil {
			return nil, err
		}
		volumes.paths[v.Name] = path
	}
	return volumes, nil
}

func (k *Kubelet) writeConfigMap(ctx context.Context, namespace, dir, name string, items []corev1.KeyToPath, defaultMode *int32, optionalRef *bool) error {
	cm, err := k.cfg.Client.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && optional(optionalRef) {
			return nil
		}
		return &mountError{msg: err.Error()}
	}
	data := map[string][]byte{}
	for key, value := range cm.Data {
		data[key] = []byte(value)
	}
	for key, value := range cm.BinaryData {
		data[key] = value
	}
	return writeKeys(dir, data, items, defaultMode, fmt.Sprintf("configmap %s", name))
}

func (k *Kubelet) writeSecret(ctx context.Context, namespace, dir, name string, items []corev1.KeyToPath, defaultMode *int32, optionalRef *bool) error {
	secret, err := k.cfg.Client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) && optional(optionalRef) {
			return nil
		}
		return &mountError{msg: err.Error()}
	}
	return writeKeys(dir, secret.Data, items, defaultMode, fmt.Sprintf("secret %s", name))
}

func (k *Kubelet) writeProjected(ctx context.Context, pod *corev1.Pod, dir string, v corev1.Volume) ([]*projectedToken, error) {
	projected := v.Projected
	var tokens []*projectedToken
	for _, source := range projected.Sources {
		var err error
		switch {
		case source.ConfigMap != nil:
			err = k.writeConfigMap(ctx, pod.Namespace, dir, source.ConfigMap.Name, source.ConfigMap.Items, projected.DefaultMode, source.ConfigMap.Optional)
		case source.Secret != nil:
			err = k.writeSecret(ctx, pod.Namespace, dir, source.Secret.Name, source.Secret.Items, projected.DefaultMode, source.Secret.Optional)
		case source.DownwardAPI != nil:
			err = writeDownwardAPI(pod, dir, source.DownwardAPI.Items, projected.DefaultMode)
		case source.ServiceAccountToken != nil:
			token := &projectedToken{volume: v, dir: dir, source: *source.ServiceAccountToken, mode: fileMode(nil, projected.DefaultMode, 0o644)}
			err = k.writeToken(ctx, pod, token)
			tokens = append(tokens, token)
		}
		if err != nil {
			return nil, err
		}
	}
	return tokens, nil
}

func writeDownwardAPI(pod *corev1.Pod, dir string, items []corev1.DownwardAPIVolumeFile, defaultMode *int32) error {
	for _, item := range items {
		var value string
		var err error
		switch {
		case item.FieldRef != nil:
			value, err = fieldValue(pod, item.FieldRef.FieldPath)
		case item.ResourceFieldRef != nil:
			c := findContainer(pod, item.ResourceFieldRef.ContainerName)
			if c == nil {
				err = fmt.Errorf("no container %q", item.ResourceFieldRef.ContainerName)
				break
			}
			value, err = resourceValue(c, item.ResourceFieldRef)
		}
		if err != nil {
			return &mountError{msg: fmt.Sprintf("downward API file %s: %v", item.Path, err)}
		}
		if err := writeFile(dir, item.Path, []byte(value), fileMode(item.Mode, defaultMode, 0o644)); err != nil {
			return err
		}
	}
	return nil
}

// writeKeys writes the selected keys (all of them without items) as files.
func writeKeys(dir string, data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32, what string) error {
	if len(items) == 0 {
		for key, value := range data {
			if err := writeFile(dir, key, value, fileMode(nil, defaultMode, 0o644)); err != nil {
				return err
			}
		}
		return nil
	}
	for _, item := range items {
		value, ok := data[item.Key]
		if !ok {
			return &mountError{msg: fmt.Sprintf("%s has no key %q", what, item.Key)}
		}
		if err := writeFile(dir, item.Path, value, fileMode(item.Mode, defaultMode, 0o644)); err != nil {
			return err
		}
	}
	return nil
}

func fileMode(item, defaultMode *int32, fallback os.FileMode) os.FileMode {
	switch {
	case item != nil:
		return os.FileMode(*item)
	case defaultMode != nil:
		return os.FileMode(*defaultMode)
	}
	return fallback
}

// writeFile writes data at the relative path inside dir, refusing paths that leave it. The file
// is replaced with a rename, so a container reading it while the kubelet refreshes it (a token)
// reads the old content or the new, never part of either.
func writeFile(dir, path string, data []byte, mode os.FileMode) error {
	clean := filepath.Clean(path)
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return &mountError{msg: fmt.Sprintf("volume file path %q leaves its volume", path)}
	}
	full := filepath.Join(dir, clean)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(full), "."+filepath.Base(full)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), full)
	}
	if err != nil {
		return fmt.Errorf("writing volume file %s: %w", full, err)
	}
	return nil
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i]
		}
	}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// containerMounts are the binds of one container: its volume mounts (with subPath) and the
// pod's hosts, hostname and resolv.conf files unless a mount covers them.
func containerMounts(c *corev1.Container, volumes map[string]string, podFiles map[string]string) ([]mountSpec, error) {
	var mounts []mountSpec
	covered := map[string]bool{}
	for _, m := range c.VolumeMounts {
		source, ok := volumes[m.Name]
		if !ok {
			return nil, &configError{msg: fmt.Sprintf("container %s mounts volume %q, which the pod does not have", c.Name, m.Name)}
		}
		if m.SubPath != "" {
			sub := filepath.Clean(m.SubPath)
			if filepath.IsAbs(sub) || sub == ".." || strings.HasPrefix(sub, "../") {
				return nil, &configError{msg: fmt.Sprintf("subPath %q of volume %s leaves the volume", m.SubPath, m.Name)}
			}
			volume := source
			source = filepath.Join(source, sub)
			if _, err := os.Stat(source); os.IsNotExist(err) {
				if err := makeSubPath(volume, source); err != nil {
					return nil, err
				}
			}
		}
		mounts = append(mounts, mountSpec{source: source, target: m.MountPath, readOnly: m.ReadOnly})
		covered[filepath.Clean(m.MountPath)] = true
	}
	for _, target := range []string{"/etc/hosts", "/etc/hostname", "/etc/resolv.conf"} {
		if !covered[target] {
			mounts = append(mounts, mountSpec{source: podFiles[target], target: target, readOnly: target != "/etc/hosts"})
		}
	}
	return mounts, nil
}

type mountSpec struct {
	source, target string
	readOnly       bool
}

// makeSubPath creates a subPath directory as the kubelet does: with the mode of the volume itself
// (an emptyDir's 0777), whatever the umask, so that a non-root container of an fsGroup can write
// in it (Kubeflow's webhook writes its certificates into one).
func makeSubPath(volume, dir string) error {
	info, err := os.Stat(volume)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	return os.Chmod(dir, info.Mode().Perm())
}
