package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// nonroot is distroless's unprivileged user, the one the image runs as (the chart's runAsUser).
const nonroot = 65532

// The image's configuration, as the Dockerfile states it (dockerfile_test.go holds the two
// together) and as distroless's static nonroot image gives it the rest.
var (
	entrypoint   = []string{"/sparkhooks"}
	cmd          = []string{"serve"}
	user         = "65532:65532"
	exposedPorts = []string{"8080/tcp", "8443/tcp"}
	env          = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
	}
	workingDir = "/home/nonroot"
)

// passwd and group are distroless's: root, nobody and nonroot, none with a shell.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group  = "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"
)

// inputs are everything the image is made of.
type inputs struct {
	sparkhooks, kubectlSpark string
	caCertificates, tzdata   string
	name, arch               string
	epoch                    int64
}

// build makes the image: the base layer, then the binaries' layer.
func build(in inputs) (v1.Image, error) {
	mtime := time.Unix(in.epoch, 0).UTC()
	base, err := baseTree(in.caCertificates, in.tzdata)
	if err != nil {
		return nil, err
	}
	binaries := tree{}
	for _, b := range []struct{ path, name string }{{in.sparkhooks, "sparkhooks"}, {in.kubectlSpark, "kubectl-spark"}} {
		data, err := readFile(b.path)
		if err != nil {
			return nil, err
		}
		binaries.file(b.name, 0o755, data)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range []struct {
		tree      tree
		createdBy string
	}{
		{base, "base: ca-certificates and tzdata from Debian, users root, nobody and nonroot (hack/image)"},
		{binaries, "/sparkhooks and /kubectl-spark (make build)"},
	} {
		data, err := writeLayer(l.tree, mtime)
		if err != nil {
			return nil, err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
			tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{Created: v1.Time{Time: mtime}, CreatedBy: l.createdBy}})
		if err != nil {
			return nil, err
		}
	}
	config, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	config = config.DeepCopy()
	config.Created = v1.Time{Time: mtime}
	config.OS, config.Architecture = "linux", in.arch
	config.Config = v1.Config{
		User: user, Entrypoint: entrypoint, Cmd: cmd, Env: env, WorkingDir: workingDir,
		ExposedPorts: map[string]struct{}{},
	}
	for _, p := range exposedPorts {
		config.Config.ExposedPorts[p] = struct{}{}
	}
	return mutate.ConfigFile(img, config)
}

// baseTree is what distroless's static image holds that the binaries use: the CA bundle, the
// time zones, the users, a writable /tmp and nonroot's home, with the packages' copyrights.
func baseTree(caCertificates, tzdata string) (tree, error) {
	t := tree{}
	for _, p := range []struct {
		tarball string
		keep    func(string) bool
	}{
		{caCertificates, func(name string) bool {
			return strings.HasPrefix(name, "usr/share/ca-certificates/mozilla/") || name == "usr/share/doc/ca-certificates/copyright"
		}},
		{tzdata, func(name string) bool {
			return strings.HasPrefix(name, "usr/share/zoneinfo/") || name == "usr/share/doc/tzdata/copyright"
		}},
	} {
		f, err := os.Open(p.tarball)
		if err != nil {
			return nil, err
		}
		err = t.addPackage(f, p.keep)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.tarball, err)
		}
	}
	// The bundle update-ca-certificates would make of the package's certificates: each one, in
	// name order. The certificates themselves are not kept: Go reads the bundle.
	certs := map[string][]byte{}
	for name, e := range t {
		if strings.HasPrefix(name, "usr/share/ca-certificates/") {
			if e.typeflag == tar.TypeReg && strings.HasSuffix(name, ".crt") {
				certs[name] = e.data
			}
			delete(t, name)
		}
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s holds no certificate", caCertificates)
	}
	var bundle bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(certs)) {
		bundle.Write(bytes.TrimRight(certs[name], "\n"))
		bundle.WriteByte('\n')
	}
	if _, ok := t["usr/share/zoneinfo/UTC"]; !ok {
		return nil, fmt.Errorf("%s holds no usr/share/zoneinfo/UTC", tzdata)
	}
	t.file("etc/ssl/certs/ca-certificates.crt", 0o644, bundle.Bytes())
	t.file("etc/passwd", 0o644, []byte(passwd))
	t.file("etc/group", 0o644, []byte(group))
	t.dir("tmp", 0o1777, 0)
	t.dir("home/nonroot", 0o700, nonroot)
	t.parents()
	return t, nil
}

// writeLayout writes img as an OCI image layout at dir, named ref in its index, and the layout as
// one tar stream at dir.tar; it returns the manifest's digest.
func writeLayout(img v1.Image, ref, dir string) (string, error) {
	named, err := name.ParseReference(ref, name.WithDefaultTag("latest"))
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return "", err
	}
	annotations := map[string]string{
		// The name containerd imports it under, and the tag as the OCI layout spec records it.
		"io.containerd.image.name":          named.Name(),
		"org.opencontainers.image.ref.name": named.Identifier(),
	}
	if err := p.AppendImage(img, layout.WithAnnotations(annotations)); err != nil {
		return "", err
	}
	if err := tarDir(dir, dir+".tar"); err != nil {
		return "", err
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	return digest.String(), nil
}

// tarDir writes the files under dir, sorted, as a tar stream with no times or owners.
func tarDir(dir, to string) error {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return err
	}
	slices.Sort(files)
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	for _, f := range files {
		data, err := readFile(f)
		if err != nil {
			out.Close()
			return err
		}
		rel, _ := filepath.Rel(dir, f)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			out.Close()
			return err
		}
		if _, err := tw.Write(data); err != nil {
			out.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// push sends the image of the layout at dir to ref, with the credentials of the user's Docker
// configuration, and returns its digest.
func push(dir, ref string) (string, error) {
	named, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		return "", err
	}
	index, err := p.ImageIndex()
	if err != nil {
		return "", err
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		return "", err
	}
	if len(manifest.Manifests) != 1 {
		return "", fmt.Errorf("%s holds %d images, want the one image build wrote", dir, len(manifest.Manifests))
	}
	img, err := index.Image(manifest.Manifests[0].Digest)
	if err != nil {
		return "", err
	}
	if err := remote.Write(named, img, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("pushing to %s: %w", ref, err)
	}
	return manifest.Manifests[0].Digest.String(), nil
}
