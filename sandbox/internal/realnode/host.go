package realnode

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// cgroupMounts are the mount points of the machine's cgroup v1 hierarchies (cpu, memory, …, and
// named ones such as name=systemd).
func cgroupMounts() ([]string, error) {
	var out []string
	err := eachMount(func(fields []string, fsType string) {
		if fsType == "cgroup" {
			out = append(out, fields[4])
		}
	})
	return out, err
}

// createCgroupRoot makes the node's cgroup root in every hierarchy; the kubelet requires it to
// exist. cpuset's needs its parent's CPUs and memory nodes before anything can join it.
func createCgroupRoot(root string) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	if len(mounts) == 0 {
		return errors.New("no cgroup v1 hierarchy is mounted (the real node is made for cgroup v1 machines)")
	}
	for _, m := range mounts {
		dir := filepath.Join(m, root)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating the cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			parent, err := os.ReadFile(filepath.Join(m, f))
			if err != nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, f), parent, 0o644); err != nil {
				return fmt.Errorf("%s of %s: %w", f, dir, err)
			}
		}
	}
	return nil
}

// removeCgroupRoot removes the node's cgroup root and everything the kubelet and runc made under
// it, deepest first; they are empty once the pods are gone.
func removeCgroupRoot(root string) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range mounts {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(m, root), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for _, d := range slices.Backward(dirs) {
			if err := unix.Rmdir(d); err != nil && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("removing the cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// unmountUnder detaches every mount below dir, the newest first: the pods' volumes, the
// containers' root filesystems, whatever the node left when it stopped.
func unmountUnder(dir string) error {
	var points []string
	if err := eachMount(func(fields []string, _ string) {
		if strings.HasPrefix(fields[4], dir+"/") {
			points = append(points, fields[4])
		}
	}); err != nil {
		return err
	}
	var errs []error
	for _, p := range slices.Backward(points) {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// eachMount calls f with the fields of each line of /proc/self/mountinfo before the separator and
// the filesystem type after it.
func eachMount(f func(fields []string, fsType string)) error {
	file, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer file.Close()
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		before, after, ok := strings.Cut(scanner.Text(), " - ")
		fields, rest := strings.Fields(before), strings.Fields(after)
		if !ok || len(fields) < 5 || len(rest) < 1 {
			continue
		}
		fields[4] = unescapeMountPath(fields[4])
		f(fields, rest[0])
	}
	return scanner.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space, …).
func unescapeMountPath(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+3 < len(p) {
			var c byte
			if _, err := fmt.Sscanf(p[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(c)
				i += 3
				continue
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// removeContainerLogLinks removes the links the kubelet keeps in /var/log/containers (a fixed
// path every kubelet of the machine shares) to this node's logs.
func removeContainerLogLinks(podLogsDir string) {
	entries, err := os.ReadDir("/var/log/containers")
	if err != nil {
		return
	}
	for _, e := range entries {
		link := filepath.Join("/var/log/containers", e.Name())
		if target, err := os.Readlink(link); err == nil && strings.HasPrefix(target, podLogsDir+"/") {
			_ = os.Remove(link)
		}
	}
}
