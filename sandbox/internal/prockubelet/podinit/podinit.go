//go:build linux

// Package podinit is the first program of every container the process kubelet starts. The kubelet
// starts it in a new mount and UTS namespace; it joins the pod's network namespace, assembles the
// container's root filesystem (the image layer over the host's root, the volumes at the paths the
// pod names), drops to the container's user and executes the container's command in place, so the
// command keeps the process the kubelet waits for and signals.
//
// It runs in a re-executed copy of the kubelet's own binary (see Reexec), because mounts must be
// made from inside the new mount namespace and Go offers no hook between fork and exec.
package podinit

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// EnvSpec names the environment variable that carries the path of the Spec file; its presence
// tells a binary that it was started as podinit.
const EnvSpec = "SPARKHOOKS_PODINIT_SPEC"

// Spec is everything podinit needs to start one container.
type Spec struct {
	// NetNS is the path of the pod's network namespace (/run/netns/<name>).
	NetNS string `json:"netns"`
	// Hostname is the pod's hostname, set in the container's UTS namespace.
	Hostname string `json:"hostname"`
	// Scratch is a host directory, private to this container start, on which podinit mounts a
	// tmpfs that holds the writable layer and the mount point of the root filesystem.
	Scratch string `json:"scratch"`
	// ImageRoot is the image layer, mounted read-only above the host's root filesystem.
	ImageRoot string `json:"imageRoot"`
	// Mounts are bound into the root filesystem in order.
	Mounts []Mount `json:"mounts"`
	// Argv is the command; Argv[0] is looked up in the PATH of Env when it has no slash.
	Argv       []string `json:"argv"`
	Env        []string `json:"env"`
	WorkingDir string   `json:"workingDir"`
	UID        uint32   `json:"uid"`
	GID        uint32   `json:"gid"`
	Groups     []uint32 `json:"groups,omitempty"`
}

// Mount binds Source (a host file or directory) at Target inside the container.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Reexec reports whether this process was started as podinit and, if so, never returns: it
// starts the container or exits with status 127 and the reason on stderr, which the kubelet
// reports as the container's failure. Call it first thing in main (or TestMain).
func Reexec() {
	path, ok := os.LookupEnv(EnvSpec)
	if !ok {
		return
	}
	// Namespaces and credentials belong to the thread; exec must happen on the one that set them.
	runtime.LockOSThread()
	if err := run(path); err != nil {
		fmt.Fprintf(os.Stderr, "podinit: %v\n", err)
		os.Exit(127)
	}
	os.Exit(127) // unreachable: run execs or fails
}

func run(specPath string) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return fmt.Errorf("reading the container spec: %w", err)
	}
	var spec Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("decoding the container spec %s: %w", specPath, err)
	}
	if len(spec.Argv) == 0 {
		return errors.New("the container has no command")
	}
	if err := joinNetNS(spec.NetNS); err != nil {
		return err
	}
	if spec.Hostname != "" {
		if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
			return fmt.Errorf("setting the hostname: %w", err)
		}
	}
	root, err := assembleRoot(&spec)
	if err != nil {
		return err
	}
	if err := unix.Chroot(root); err != nil {
		return fmt.Errorf("chroot %s: %w", root, err)
	}
	workDir := spec.WorkingDir
	if workDir == "" {
		workDir = "/"
	}
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return fmt.Errorf("creating the working directory %s: %w", workDir, err)
	}
	if spec.UID != 0 {
		// A working directory the image did not make belongs to root; the container's user
		// needs to write there, as it could in a real image layer made for that user.
		if info, err := os.Stat(workDir); err == nil && info.Sys().(*syscall.Stat_t).Uid == 0 && workDir != "/" {
			_ = os.Chown(workDir, int(spec.UID), int(spec.GID))
		}
	}
	if err := unix.Chdir(workDir); err != nil {
		return fmt.Errorf("entering the working directory %s: %w", workDir, err)
	}
	binary, err := lookPath(spec.Argv[0], spec.Env)
	if err != nil {
		return err
	}
	if err := dropPrivileges(spec); err != nil {
		return err
	}
	// The kubelet kills the whole group when it stops the container.
	if _, err := unix.Setsid(); err != nil {
		return fmt.Errorf("setsid: %w", err)
	}
	// Changing credentials cleared the parent-death signal; a container must not outlive the
	// kubelet that runs it.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("setting the parent-death signal: %w", err)
	}
	if err := unix.Exec(binary, spec.Argv, spec.Env); err != nil {
		return fmt.Errorf("exec %s: %w", binary, err)
	}
	return nil
}

func joinNetNS(path string) error {
	if path == "" {
		return nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the pod's network namespace %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("joining the pod's network namespace %s: %w", path, err)
	}
	return nil
}

// hostDirs are the top-level directories of the host's root filesystem that a container sees,
// as a container image would hold them. The rest (the host's /work, /mnt, /tmp...) stays hidden.
var hostDirs = []string{"bin", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "root", "sbin", "srv", "usr", "var"}

// assembleRoot builds the container's root filesystem and returns its path: a tmpfs holding, per
// top-level directory, an overlay of the image layer's directory over the host's, each with a
// writable layer in memory; then fresh /proc, /dev, /sys, /tmp and the volumes.
//
// One overlay per directory rather than one over the host's whole root: overlayfs refuses lower
// layers that contain one another, and the image layer lives somewhere under the host's root.
func assembleRoot(spec *Spec) (string, error) {
	// Nothing mounted from here on may reach the host's mount table.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return "", fmt.Errorf("making the mounts private: %w", err)
	}
	if err := unix.Mount("tmpfs", spec.Scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return "", fmt.Errorf("mounting the scratch tmpfs on %s: %w", spec.Scratch, err)
	}
	root := filepath.Join(spec.Scratch, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return "", err
	}
	if err := layerTopLevel(spec, root); err != nil {
		return "", err
	}
	special := []struct {
		target, fstype, source, data string
		flags                        uintptr
	}{
		{"/proc", "proc", "proc", "", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC},
		{"/sys", "", "/sys", "", unix.MS_BIND | unix.MS_REC},
		{"/tmp", "tmpfs", "tmpfs", "mode=1777", unix.MS_NOSUID | unix.MS_NODEV},
		{"/run", "tmpfs", "tmpfs", "mode=0755", unix.MS_NOSUID | unix.MS_NODEV},
		{"/dev", "tmpfs", "tmpfs", "mode=0755", unix.MS_NOSUID},
		{"/dev/shm", "tmpfs", "shm", "mode=1777", unix.MS_NOSUID | unix.MS_NODEV},
	}
	for _, m := range special {
		target := filepath.Join(root, m.target)
		if err := os.MkdirAll(target, 0o755); err != nil {
			return "", err
		}
		if err := unix.Mount(m.source, target, m.fstype, m.flags, m.data); err != nil {
			return "", fmt.Errorf("mounting %s: %w", m.target, err)
		}
	}
	if err := populateDev(filepath.Join(root, "dev")); err != nil {
		return "", err
	}
	for _, m := range spec.Mounts {
		if err := bind(root, m); err != nil {
			return "", err
		}
	}
	return root, nil
}

// layerTopLevel fills root with the host's top-level directories and symbolic links (/bin ->
// usr/bin), each directory an overlay of the image's directory of that name over the host's, and
// the image's own top-level files (a static binary at /sparkhooks, as distroless images hold them).
func layerTopLevel(spec *Spec, root string) error {
	lowers := map[string][]string{}
	var names []string
	add := func(name, dir string) {
		if _, seen := lowers[name]; !seen {
			names = append(names, name)
		}
		lowers[name] = append(lowers[name], dir)
	}
	if spec.ImageRoot != "" {
		entries, err := os.ReadDir(spec.ImageRoot)
		if err != nil {
			return fmt.Errorf("reading the image layer: %w", err)
		}
		for _, e := range entries {
			switch {
			case e.IsDir():
				add(e.Name(), filepath.Join(spec.ImageRoot, e.Name()))
			case e.Type().IsRegular():
				if err := bind(root, Mount{Source: filepath.Join(spec.ImageRoot, e.Name()), Target: "/" + e.Name(), ReadOnly: true}); err != nil {
					return err
				}
			}
		}
	}
	for _, name := range hostDirs {
		host := "/" + name
		info, err := os.Lstat(host)
		switch {
		case err != nil:
			continue
		case info.Mode()&os.ModeSymlink != 0:
			if _, fromImage := lowers[name]; fromImage {
				continue
			}
			dest, err := os.Readlink(host)
			if err != nil {
				return err
			}
			if err := os.Symlink(dest, filepath.Join(root, name)); err != nil {
				return err
			}
		case info.IsDir():
			add(name, host)
		}
	}
	for _, name := range names {
		upper, work, target := filepath.Join(spec.Scratch, "upper", name), filepath.Join(spec.Scratch, "work", name), filepath.Join(root, name)
		for _, dir := range []string{upper, work, target} {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		options := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s", strings.Join(lowers[name], ":"), upper, work)
		if err := unix.Mount("overlay", target, "overlay", 0, options); err != nil {
			return fmt.Errorf("mounting /%s (overlay %s): %w", name, options, err)
		}
	}
	return nil
}

// populateDev gives the container's own /dev the devices a runtime provides, bound from the
// host's, so that files mounted into /dev (the termination log) never land on the host's.
func populateDev(dev string) error {
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		if err := bind(filepath.Dir(dev), Mount{Source: "/dev/" + name, Target: "/dev/" + name}); err != nil {
			return err
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2", "ptmx": "pts/ptmx"}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dev, name)); err != nil {
			return err
		}
	}
	return nil
}

// bind mounts m inside root, creating the mount point (a file for a file, a directory for a
// directory) in the writable layer.
func bind(root string, m Mount) error {
	if !filepath.IsAbs(m.Target) {
		return fmt.Errorf("mount path %q is not absolute", m.Target)
	}
	target, err := resolveInRoot(root, m.Target)
	if err != nil {
		return fmt.Errorf("mount path %s: %w", m.Target, err)
	}
	info, err := os.Stat(m.Source)
	if err != nil {
		return fmt.Errorf("volume source for %s: %w", m.Target, err)
	}
	if info.IsDir() {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return fmt.Errorf("creating the mount point %s: %w", m.Target, err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fmt.Errorf("creating the mount point %s: %w", m.Target, err)
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("creating the mount point %s: %w", m.Target, err)
		}
		f.Close()
	}
	if err := unix.Mount(m.Source, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s at %s: %w", m.Source, m.Target, err)
	}
	if m.ReadOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", m.Target, err)
		}
	}
	return nil
}

// resolveInRoot returns the host path of path inside root, following symbolic links as the
// container will see them: an absolute link target starts again at root, not at the host's /.
// Debian's /var/run -> /run is why: without this, the service-account token mounted at
// /var/run/secrets/... would land in the host's /run. Components that do not exist yet are
// taken literally, as the mount point is created there.
func resolveInRoot(root, path string) (string, error) {
	const maxLinks = 40
	links := 0
	resolved := root
	rest := strings.Split(filepath.Clean(path), "/")
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			if resolved != root {
				resolved = filepath.Dir(resolved)
			}
			continue
		}
		next := filepath.Join(resolved, part)
		info, err := os.Lstat(next)
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("too many symbolic links under %s", root)
		}
		dest, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(dest) {
			resolved = root
		}
		rest = append(strings.Split(dest, "/"), rest...)
	}
	return resolved, nil
}

func dropPrivileges(spec Spec) error {
	groups := spec.Groups
	if groups == nil {
		groups = []uint32{}
	}
	gids := make([]int, len(groups))
	for i, g := range groups {
		gids[i] = int(g)
	}
	if err := syscall.Setgroups(gids); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setgid(int(spec.GID)); err != nil {
		return fmt.Errorf("setgid %d: %w", spec.GID, err)
	}
	if err := syscall.Setuid(int(spec.UID)); err != nil {
		return fmt.Errorf("setuid %d: %w", spec.UID, err)
	}
	return nil
}

// lookPath finds name in the PATH of the container's environment, after chroot.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		candidate := filepath.Join(dir, name)
		if info, err := os.Stat(candidate); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("executable %q not found in $PATH (%s)", name, path)
}
