package realnode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/ociimage"
)

// criNamespace is the containerd namespace the CRI plugin keeps the kubelet's images and
// containers in.
const criNamespace = "k8s.io"

// containerdConfig is containerd's configuration: everything under the node's directory, the CRI
// plugin on the cgroupfs driver (the machine has no systemd) with a local sandbox image and
// oom_score_adj clamped to what the node may set (no CAP_SYS_RESOURCE on this kind of machine:
// runc fails a container whose score it cannot lower), and the pods on the CNI bridge.
var containerdConfig = template.Must(template.New("containerd").Parse(`version = 2
root = "{{.Dir}}/root"
state = "{{.Dir}}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "{{.Socket}}"

[ttrpc]
  address = "{{.Socket}}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{{.Dir}}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.SandboxImage}}"
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "{{.Runc}}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{{.CNIBinDir}}"
    conf_dir = "{{.CNIConfDir}}"
`))

// cniConfig puts the pods on the bridge cni0 of the node's namespace, the bridge their gateway,
// addresses from the node's pod network, traffic to anywhere but the pod network masqueraded as
// the node's (as a cluster's CNI does for traffic that leaves it).
func cniConfig(podCIDR netip.Prefix, mtu int, ipamDir string) ([]byte, error) {
	return json.MarshalIndent(map[string]any{
		"cniVersion": "1.0.0",
		"name":       "sparkhooks",
		"plugins": []any{map[string]any{
			"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true, "mtu": mtu,
			"ipam": map[string]any{
				"type":    "host-local",
				"ranges":  [][]map[string]string{{{"subnet": podCIDR.String()}}},
				"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
				"dataDir": ipamDir,
			},
		}},
	}, "", "  ")
}

type containerd struct {
	*daemon
	socket string
	ctr    string
}

func startContainerd(n *network, binDir, dir, logDir, sandboxImage string) (*containerd, error) {
	confDir := filepath.Join(dir, "cni", "net.d")
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return nil, err
	}
	cni, err := cniConfig(n.podCIDR, n.mtu, filepath.Join(dir, "cni", "ipam"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-sparkhooks.conflist"), cni, 0o644); err != nil {
		return nil, err
	}
	sandbox, err := ociimage.FullName(sandboxImage)
	if err != nil {
		return nil, err
	}
	c := &containerd{socket: filepath.Join(dir, "containerd.sock"), ctr: filepath.Join(binDir, "ctr")}
	var config bytes.Buffer
	if err := containerdConfig.Execute(&config, map[string]string{
		"Dir": filepath.Join(dir, "containerd"), "Socket": c.socket, "SandboxImage": sandbox,
		"Runc": filepath.Join(binDir, "runc"), "CNIBinDir": filepath.Join(binDir, "cni"), "CNIConfDir": confDir,
	}); err != nil {
		return nil, err
	}
	configFile := filepath.Join(dir, "containerd.toml")
	if err := os.WriteFile(configFile, config.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if c.daemon, err = startDaemon(n, logDir, "containerd", filepath.Join(binDir, "containerd"), "--config", configFile); err != nil {
		return nil, err
	}
	return c, nil
}

// ready waits until containerd answers.
func (c *containerd) ready(ctx context.Context) error {
	return c.waitFor(ctx, "containerd", func(ctx context.Context) error {
		_, err := c.run(ctx, nil, "version")
		return err
	})
}

// importImages loads images into the CRI plugin's namespace, streamed as one OCI archive to ctr,
// which unpacks them for the overlayfs snapshotter the pods run on.
func (c *containerd) importImages(ctx context.Context, images []ociimage.Image) error {
	reader, writer := io.Pipe()
	go func() { writer.CloseWithError(ociimage.WriteArchive(writer, images)) }()
	defer reader.Close()
	if _, err := c.run(ctx, reader, "images", "import", "--digests", "-"); err != nil {
		return fmt.Errorf("importing images into containerd: %w", err)
	}
	return nil
}

// importArchive loads an OCI image archive as it is, and tags the image it holds, named name
// there, with ref too.
func (c *containerd) importArchive(ctx context.Context, archive, name, ref string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := c.run(ctx, f, "images", "import", "--digests", "-"); err != nil {
		return fmt.Errorf("importing %s into containerd: %w", archive, err)
	}
	if name == ref {
		return nil
	}
	if _, err := c.run(ctx, nil, "images", "tag", "--force", name, ref); err != nil {
		return fmt.Errorf("tagging %s as %s: %w", name, ref, err)
	}
	return nil
}

func (c *containerd) run(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.ctr, append([]string{"--address", c.socket, "--namespace", criNamespace}, args...)...)
	cmd.Stdin = stdin
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ctr %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
