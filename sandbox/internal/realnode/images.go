package realnode

import (
	"context"
	"debug/elf"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/ociimage"
)

// staticBaseFiles are what a distroless static image gives a binary: the users it runs as, and a
// world-writable /tmp.
var staticBaseFiles = map[string]string{
	"etc/passwd": "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
	"etc/group":  "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n",
}

// BinaryImage is an image of binaries: root holds them where the image has them, over a base like
// distroless's static image, or over the Debian base when one of them is linked dynamically (a Go
// binary built with cgo, as the race detector needs) and wants a C library.
func (n *Node) BinaryImage(names []string, root string, config ociimage.Config) (ociimage.Image, error) {
	dynamic, err := hasDynamicExecutable(root)
	if err != nil {
		return ociimage.Image{}, err
	}
	var base ociimage.Layer
	if dynamic {
		base, err = ociimage.LayerCache{Dir: n.config.LayerCache}.FromTar(filepath.Join(n.config.BinDir, "rootfs.tar"))
	} else {
		base, err = n.staticBase()
	}
	if err != nil {
		return ociimage.Image{}, err
	}
	top, err := n.runLayers.FromDir(root)
	if err != nil {
		return ociimage.Image{}, err
	}
	return ociimage.Image{Names: names, Layers: []ociimage.Layer{base, top}, Config: config}, nil
}

// SparkImage is a Spark image: root (a layer `make spark-images` prepared) over the Debian base
// with Java 17 and Python 3 (hack/node/build.sh's rootfs.tar). Both layers are kept in the
// LayerCache between runs.
func (n *Node) SparkImage(names []string, root string, config ociimage.Config) (ociimage.Image, error) {
	cache := ociimage.LayerCache{Dir: n.config.LayerCache}
	base, err := cache.FromTar(filepath.Join(n.config.BinDir, "rootfs.tar"))
	if err != nil {
		return ociimage.Image{}, err
	}
	top, err := cache.FromDir(root)
	if err != nil {
		return ociimage.Image{}, err
	}
	return ociimage.Image{Names: names, Layers: []ociimage.Layer{base, top}, Config: config}, nil
}

// Import loads images into the node's containerd; pods then run them with imagePullPolicy
// IfNotPresent or Never, as in an air-gapped cluster.
func (n *Node) Import(ctx context.Context, images []ociimage.Image) error {
	return n.containerd.importImages(ctx, images)
}

// ImportArchive loads the image of an OCI image archive (make image's bin/image.tar) as it is, so
// that pods run exactly its manifest and layers, and names it ref too, the name pods give it. It
// returns the image's digest.
func (n *Node) ImportArchive(ctx context.Context, archive, ref string) (string, error) {
	name, digest, err := ociimage.ArchiveImage(archive)
	if err != nil {
		return "", err
	}
	full, err := ociimage.FullName(ref)
	if err != nil {
		return "", err
	}
	if err := n.containerd.importArchive(ctx, archive, name, full); err != nil {
		return "", err
	}
	return digest.String(), nil
}

// systemImages are the node's own: the sandbox image and CoreDNS.
func (n *Node) systemImages() ([]ociimage.Image, error) {
	var images []ociimage.Image
	for _, b := range []struct {
		name, binary string
		config       ociimage.Config
	}{
		{PauseImage, "pause", ociimage.Config{Entrypoint: []string{"/pause"}, User: "65535:65535"}},
		// As root, which CoreDNS's Deployment narrows to NET_BIND_SERVICE for port 53 (the
		// upstream image gives its binary that file capability instead).
		{CoreDNSImage, "coredns", ociimage.Config{Entrypoint: []string{"/coredns"}}},
	} {
		root := filepath.Join(n.config.Dir, "images", b.binary)
		if err := copyExecutable(filepath.Join(n.config.BinDir, b.binary), filepath.Join(root, b.binary)); err != nil {
			return nil, err
		}
		image, err := n.BinaryImage([]string{b.name}, root, b.config)
		if err != nil {
			return nil, err
		}
		images = append(images, image)
	}
	return images, nil
}

// staticBase writes the tree of the static base under the node's directory and makes its layer.
func (n *Node) staticBase() (ociimage.Layer, error) {
	root := filepath.Join(n.config.Dir, "images", "static-base")
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		return ociimage.Layer{}, err
	}
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o755); err != nil {
		return ociimage.Layer{}, err
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777|os.ModeSticky); err != nil {
		return ociimage.Layer{}, err
	}
	for name, content := range staticBaseFiles {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			return ociimage.Layer{}, err
		}
	}
	return n.runLayers.FromDir(root)
}

// hasDynamicExecutable reports whether a file under root is an ELF executable with an interpreter.
func hasDynamicExecutable(root string) (bool, error) {
	dynamic := false
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || dynamic {
			return err
		}
		f, err := elf.Open(path)
		if err != nil {
			return nil // not an ELF file
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				dynamic = true
			}
		}
		return nil
	})
	return dynamic, err
}

// copyExecutable copies a binary into an image's tree, with the time of the source, so that an
// unchanged binary makes an unchanged layer.
func copyExecutable(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	info, err := os.Stat(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		return err
	}
	return os.Chtimes(to, time.Time{}, info.ModTime())
}
