package ociimage

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

func TestFullName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"apache/spark:3.5.3", "docker.io/apache/spark:3.5.3"},
		{"spark:4.0.1", "docker.io/library/spark:4.0.1"},
		{"busybox", "docker.io/library/busybox:latest"},
		{"example.com/team/app:v1", "example.com/team/app:v1"},
		{"localhost:5000/app", "localhost:5000/app:latest"},
	} {
		got, err := FullName(c.in)
		if err != nil || got != c.want {
			t.Errorf("FullName(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := FullName("Spark:3.5.3"); err == nil {
		t.Error("an invalid reference was accepted")
	}
}

// tree makes a small tree with a directory, a file, a symbolic link and a hard link.
func tree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, "opt", "bin"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "opt", "bin", "tool"), []byte("#!/bin/sh\necho hi\n"), 0o755))
	must(t, os.Symlink("bin/tool", filepath.Join(dir, "opt", "tool")))
	must(t, os.Link(filepath.Join(dir, "opt", "bin", "tool"), filepath.Join(dir, "opt", "same")))
	when := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{"opt/bin/tool", "opt/bin", "opt"} {
		must(t, os.Chtimes(filepath.Join(dir, p), when, when))
	}
	return dir
}

func TestWriteTree(t *testing.T) {
	dir := tree(t)
	var first, second bytes.Buffer
	must(t, WriteTree(&first, dir))
	must(t, WriteTree(&second, dir))
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Fatal("the same tree made two different tars")
	}
	got := map[string]string{}
	tr := tar.NewReader(&first)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(t, err)
		body, _ := io.ReadAll(tr)
		got[h.Name] = string(h.Typeflag) + " " + h.Linkname + " " + string(body)
	}
	want := map[string]string{
		"opt/":         "5  ",
		"opt/bin/":     "5  ",
		"opt/bin/tool": "0  #!/bin/sh\necho hi\n",
		"opt/same":     "1 opt/bin/tool ",
		"opt/tool":     "2 bin/tool ",
	}
	if len(got) != len(want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %q, want %q", name, got[name], w)
		}
	}
}

func TestLayerCacheFromDir(t *testing.T) {
	dir := tree(t)
	cache := LayerCache{Dir: t.TempDir()}
	first, err := cache.FromDir(dir)
	must(t, err)
	data, err := os.ReadFile(first.Path)
	must(t, err)
	if digest.FromBytes(data) != first.Digest || int64(len(data)) != first.Size {
		t.Fatalf("layer %+v does not describe its file", first)
	}
	again, err := cache.FromDir(dir)
	must(t, err)
	if again != first {
		t.Errorf("an unchanged tree made a new layer: %+v, then %+v", first, again)
	}
	must(t, os.WriteFile(filepath.Join(dir, "opt", "new"), []byte("x"), 0o644))
	changed, err := cache.FromDir(dir)
	must(t, err)
	if changed.Digest == first.Digest {
		t.Error("a changed tree kept its layer")
	}
	tarred, err := cache.FromTar(first.Path)
	must(t, err)
	if tarred.Digest != first.Digest || tarred.Size != first.Size {
		t.Errorf("FromTar of the layer's own file: %+v, want %+v", tarred, first)
	}
}

func TestWriteArchive(t *testing.T) {
	cache := LayerCache{Dir: t.TempDir()}
	base, err := cache.FromDir(tree(t))
	must(t, err)
	top := t.TempDir()
	must(t, os.WriteFile(filepath.Join(top, "app"), []byte("app"), 0o755))
	app, err := cache.FromDir(top)
	must(t, err)
	images := []Image{
		{Names: []string{"team/app:1", "app:1"}, Layers: []Layer{base, app}, Config: Config{Entrypoint: []string{"/app"}, User: "185", Env: []string{"A=b"}, WorkingDir: "/w"}},
		{Names: []string{"base:1"}, Layers: []Layer{base}},
	}
	var archive bytes.Buffer
	must(t, WriteArchive(&archive, images))

	files := map[string][]byte{}
	tr := tar.NewReader(&archive)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		must(t, err)
		if _, dup := files[h.Name]; dup {
			t.Errorf("%s written twice", h.Name)
		}
		files[h.Name], _ = io.ReadAll(tr)
	}
	for name, data := range files {
		if encoded, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && digest.FromBytes(data).Encoded() != encoded {
			t.Errorf("blob %s holds other content", name)
		}
	}
	var index ocispec.Index
	must(t, json.Unmarshal(files["index.json"], &index))
	names := map[string]digest.Digest{}
	for _, m := range index.Manifests {
		names[m.Annotations["io.containerd.image.name"]] = m.Digest
	}
	if len(names) != 3 || names["docker.io/team/app:1"] != names["docker.io/library/app:1"] || names["docker.io/library/base:1"] == "" {
		t.Fatalf("index names %v", names)
	}
	var manifest ocispec.Manifest
	must(t, json.Unmarshal(files[blobPath(names["docker.io/team/app:1"])], &manifest))
	if len(manifest.Layers) != 2 || manifest.Layers[0].Digest != base.Digest || manifest.Layers[1].Digest != app.Digest {
		t.Errorf("manifest layers %+v", manifest.Layers)
	}
	var config ocispec.Image
	must(t, json.Unmarshal(files[blobPath(manifest.Config.Digest)], &config))
	if config.Config.User != "185" || config.Config.Entrypoint[0] != "/app" || config.Config.WorkingDir != "/w" || len(config.RootFS.DiffIDs) != 2 {
		t.Errorf("config %+v", config)
	}
	if _, ok := files["oci-layout"]; !ok {
		t.Error("no oci-layout")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestArchiveImage(t *testing.T) {
	manifest := digest.FromString("manifest")
	archive := func(index ocispec.Index) string {
		data, err := json.Marshal(index)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for name, content := range map[string][]byte{"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`), "index.json": data} {
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(content); err != nil {
				t.Fatal(err)
			}
		}
		tw.Close()
		path := filepath.Join(t.TempDir(), "image.tar")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	named := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: manifest, Size: 10,
		Annotations: map[string]string{"io.containerd.image.name": "ghcr.io/sparkhooks/sparkhooks:v1"}}
	name, got, err := ArchiveImage(archive(ocispec.Index{Manifests: []ocispec.Descriptor{named}}))
	if err != nil || name != "ghcr.io/sparkhooks/sparkhooks:v1" || got != manifest {
		t.Errorf("ArchiveImage = %q, %s, %v; want the one image's name and digest", name, got, err)
	}
	for what, index := range map[string]ocispec.Index{
		"two images": {Manifests: []ocispec.Descriptor{named, named}},
		"no name":    {Manifests: []ocispec.Descriptor{{MediaType: ocispec.MediaTypeImageManifest, Digest: manifest, Size: 10}}},
	} {
		if _, _, err := ArchiveImage(archive(index)); err == nil || !strings.Contains(err.Error(), "want one with the annotation") {
			t.Errorf("%s: %v, want an error saying the archive must hold one named image", what, err)
		}
	}
}
