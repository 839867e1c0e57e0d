package main

import (
	"archive/tar"
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// fixtureInputs are the image's inputs in small: two binaries and the data tarballs of the two
// packages, shaped as dpkg-deb --fsys-tarfile prints them.
func fixtureInputs(t *testing.T) inputs {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	debTar := func(name string, entries []tar.Header, content map[string]string) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		tw := tar.NewWriter(f)
		for _, h := range entries {
			h.Size = int64(len(content[h.Name]))
			if err := tw.WriteHeader(&h); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write([]byte(content[h.Name])); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		return path
	}
	reg := func(name string) tar.Header { return tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644} }
	return inputs{
		sparkhooks:   write("sparkhooks", []byte("\x7fELF sparkhooks")),
		kubectlSpark: write("kubectl-spark", []byte("\x7fELF kubectl-spark")),
		caCertificates: debTar("ca.tar", []tar.Header{
			{Name: "./", Typeflag: tar.TypeDir, Mode: 0o755},
			{Name: "./usr/share/ca-certificates/mozilla/", Typeflag: tar.TypeDir, Mode: 0o755},
			reg("./usr/share/ca-certificates/mozilla/B.crt"), reg("./usr/share/ca-certificates/mozilla/A.crt"),
			reg("./usr/sbin/update-ca-certificates"), reg("./usr/share/doc/ca-certificates/copyright"),
		}, map[string]string{
			"./usr/share/ca-certificates/mozilla/A.crt": "-----A-----\n", "./usr/share/ca-certificates/mozilla/B.crt": "-----B-----",
			"./usr/share/doc/ca-certificates/copyright": "MPL",
		}),
		tzdata: debTar("tz.tar", []tar.Header{
			reg("./usr/share/zoneinfo/UTC"), reg("./usr/share/zoneinfo/Europe/Paris"),
			{Name: "./usr/share/zoneinfo/Europe/Monaco", Typeflag: tar.TypeSymlink, Linkname: "Paris", Mode: 0o777},
			reg("./usr/share/doc/tzdata/README.Debian"),
		}, map[string]string{"./usr/share/zoneinfo/UTC": "TZif", "./usr/share/zoneinfo/Europe/Paris": "TZif2"}),
		name: "ghcr.io/sparkhooks/sparkhooks:test", arch: "amd64", epoch: 1700000000,
	}
}

// files lists the image's files, top layer last, by name: type, mode, owner and content.
func files(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	out := map[string]*tar.Header{}
	r := mutate.Extract(img)
	defer r.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		h.PAXRecords = map[string]string{"content": string(data)}
		out[strings.TrimSuffix(h.Name, "/")] = h
	}
	return out
}

func TestImageIsTheDockerfilesImage(t *testing.T) {
	img, err := build(fixtureInputs(t))
	if err != nil {
		t.Fatal(err)
	}
	config, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	promised := dockerfilePromises(t)
	if config.Config.User != promised.user {
		t.Errorf("user %q, the Dockerfile says %q", config.Config.User, promised.user)
	}
	if !slices.Equal(config.Config.Entrypoint, promised.entrypoint) || !slices.Equal(config.Config.Cmd, promised.cmd) {
		t.Errorf("entrypoint %q cmd %q, the Dockerfile says %q %q", config.Config.Entrypoint, config.Config.Cmd, promised.entrypoint, promised.cmd)
	}
	var ports []string
	for p := range config.Config.ExposedPorts {
		ports = append(ports, p)
	}
	slices.Sort(ports)
	if !slices.Equal(ports, promised.ports) {
		t.Errorf("exposed ports %q, the Dockerfile says %q", ports, promised.ports)
	}
	fs := files(t, img)
	for _, copied := range promised.copied {
		if h := fs[strings.TrimPrefix(copied, "/")]; h == nil || h.Mode != 0o755 || h.Uid != 0 {
			t.Errorf("%s, which the Dockerfile copies in: %+v, want an executable of root's", copied, h)
		}
	}
	// What the Dockerfile's base (distroless static-debian12:nonroot) promises.
	if promised.base != "gcr.io/distroless/static-debian12:nonroot" {
		t.Fatalf("the Dockerfile's base is %q: check what hack/image builds against it", promised.base)
	}
	want := map[string]struct {
		mode     int64
		uid      int
		contains string
	}{
		"etc/ssl/certs/ca-certificates.crt": {0o644, 0, "-----A-----\n-----B-----\n"},
		"usr/share/zoneinfo/UTC":            {0o644, 0, "TZif"},
		"usr/share/zoneinfo/Europe/Paris":   {0o644, 0, "TZif2"},
		"etc/passwd":                        {0o644, 0, "nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
		"etc/group":                         {0o644, 0, "nonroot:x:65532:\n"},
		"home/nonroot":                      {0o700, nonroot, ""},
		"tmp":                               {0o1777, 0, ""},
		"usr/share/doc/ca-certificates/copyright": {0o644, 0, "MPL"},
	}
	for name, w := range want {
		h := fs[name]
		if h == nil {
			t.Errorf("no %s in the image", name)
			continue
		}
		if h.Mode != w.mode || h.Uid != w.uid || !strings.Contains(h.PAXRecords["content"], w.contains) {
			t.Errorf("%s: mode %o uid %d content %q; want %o, %d, with %q", name, h.Mode, h.Uid, h.PAXRecords["content"], w.mode, w.uid, w.contains)
		}
	}
	if h := fs["usr/share/zoneinfo/Europe/Monaco"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "Paris" {
		t.Errorf("usr/share/zoneinfo/Europe/Monaco: %+v, want the package's link to Paris", h)
	}
	for _, left := range []string{"usr/sbin/update-ca-certificates", "usr/share/ca-certificates/mozilla/A.crt", "usr/share/doc/tzdata/README.Debian"} {
		if fs[left] != nil {
			t.Errorf("%s is in the image: only the bundle, the zones and the copyrights are taken", left)
		}
	}
	if config.Config.WorkingDir != "/home/nonroot" || !strings.HasSuffix(promised.user, "65532") {
		t.Errorf("working directory %q, user %q: distroless's nonroot has /home/nonroot and 65532", config.Config.WorkingDir, promised.user)
	}
}

func TestImageIsReproducible(t *testing.T) {
	in := fixtureInputs(t)
	var digests, archives []string
	for range 2 {
		img, err := build(in)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "image")
		digest, err := writeLayout(img, in.name, dir)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(dir + ".tar")
		if err != nil {
			t.Fatal(err)
		}
		digests, archives = append(digests, digest), append(archives, string(data))
		// The layout reads back as the one image, under its name.
		p, err := layout.FromPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		index, err := p.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := index.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(manifest.Manifests) != 1 || manifest.Manifests[0].Digest.String() != digest ||
			manifest.Manifests[0].Annotations["io.containerd.image.name"] != in.name {
			t.Errorf("index %+v: want the one image %s named %s", manifest.Manifests, digest, in.name)
		}
	}
	if digests[0] != digests[1] || archives[0] != archives[1] {
		t.Errorf("two builds of the same inputs: digests %s and %s, archives equal: %v", digests[0], digests[1], archives[0] == archives[1])
	}
	in.epoch++
	img, err := build(in)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := img.Digest(); d.String() == digests[0] {
		t.Errorf("another SOURCE_DATE_EPOCH made the same digest %s: the times are not in the image", d)
	}
}

// promises is what the Dockerfile's final stage says of the image.
type promises struct {
	base            string
	user            string
	entrypoint, cmd []string
	ports, copied   []string
}

// dockerfilePromises reads the final stage of the repository's Dockerfile.
func dockerfilePromises(t *testing.T) promises {
	t.Helper()
	f, err := os.Open("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var p promises
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		instruction, args, _ := strings.Cut(strings.TrimSpace(scanner.Text()), " ")
		switch instruction {
		case "FROM":
			p = promises{base: strings.Fields(args)[len(strings.Fields(args))-1]}
			if strings.Contains(args, " AS ") {
				p.base = strings.Fields(args)[len(strings.Fields(args))-3]
			}
		case "USER":
			p.user = args
		case "ENTRYPOINT":
			p.entrypoint = execForm(t, args)
		case "CMD":
			p.cmd = execForm(t, args)
		case "EXPOSE":
			for _, port := range strings.Fields(args) {
				p.ports = append(p.ports, port+"/tcp")
			}
		case "COPY":
			fields := strings.Fields(args)
			p.copied = append(p.copied, fields[len(fields)-1])
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(p.ports)
	return p
}

// execForm reads ["a", "b"].
func execForm(t *testing.T, args string) []string {
	t.Helper()
	var out []string
	for _, field := range strings.Split(strings.Trim(args, "[] "), ",") {
		out = append(out, strings.Trim(strings.TrimSpace(field), `"`))
	}
	return out
}
