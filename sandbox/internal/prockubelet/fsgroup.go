package prockubelet

import (
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
)

// applyFSGroup gives the pod's fsGroup the volume's files, as the kubelet's volume ownership
// management does for the volume types it owns (emptyDir, and the atomically written secret,
// configMap, downwardAPI and projected volumes): group owner fsGroup, group read (and write for
// emptyDir) added to every file, directories set-group-ID so that new files inherit the group.
// Without it a non-root container cannot read a Secret mounted with mode 0440 (the sparkhooks
// chart's webhook certificate), as on a real node it can.
func applyFSGroup(pod *corev1.Pod, v corev1.Volume, path string) error {
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.FSGroup == nil {
		return nil
	}
	readOnly := true
	switch {
	case v.EmptyDir != nil:
		readOnly = false
	case v.Secret != nil, v.ConfigMap != nil, v.DownwardAPI != nil, v.Projected != nil:
	default:
		return nil
	}
	gid := int(*sc.FSGroup)
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return nil
		}
		if err := os.Lchown(p, -1, gid); err != nil {
			return err
		}
		mode := info.Mode()
		switch {
		case info.IsDir():
			mode |= os.ModeSetgid | 0o050
			if !readOnly {
				mode |= 0o020
			}
		case readOnly:
			mode |= 0o040
		default:
			mode |= 0o060
		}
		return os.Chmod(p, mode)
	})
}
