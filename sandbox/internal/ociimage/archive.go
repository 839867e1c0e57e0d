package ociimage

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/distribution/reference"
	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Config is what a runtime reads of an image's configuration.
type Config struct {
	Entrypoint, Cmd, Env []string
	WorkingDir           string
	// User is a numeric uid, optionally with ":gid".
	User string
}

// Image is layers, bottom first, and a configuration, under the references pods name it by.
type Image struct {
	Names  []string
	Layers []Layer
	Config Config
}

// FullName is the reference a runtime stores an image under for what a pod writes: a short Docker
// Hub name gets the registry and library/ a runtime implies, and every name a tag (latest if none).
func FullName(ref string) (string, error) {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	return reference.TagNameOnly(named).String(), nil
}

// WriteArchive writes images as one OCI image layout in a tar stream, as `ctr images import`
// reads it: every blob once, and in index.json one manifest per name, annotated with the full
// name containerd stores it under.
func WriteArchive(w io.Writer, images []Image) error {
	tw := tar.NewWriter(w)
	written := map[digest.Digest]bool{}
	var index ocispec.Index
	index.SchemaVersion = 2
	index.MediaType = ocispec.MediaTypeImageIndex
	platform := &ocispec.Platform{OS: "linux", Architecture: runtime.GOARCH}
	for _, image := range images {
		config := ocispec.Image{
			Platform: *platform,
			Config: ocispec.ImageConfig{
				User: image.Config.User, Env: image.Config.Env, Entrypoint: image.Config.Entrypoint,
				Cmd: image.Config.Cmd, WorkingDir: image.Config.WorkingDir,
			},
			RootFS: ocispec.RootFS{Type: "layers"},
		}
		manifest := ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest}
		for _, l := range image.Layers {
			config.RootFS.DiffIDs = append(config.RootFS.DiffIDs, l.Digest)
			manifest.Layers = append(manifest.Layers, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayer, Digest: l.Digest, Size: l.Size})
			if written[l.Digest] {
				continue
			}
			if err := writeFileBlob(tw, l); err != nil {
				return err
			}
			written[l.Digest] = true
		}
		configDesc, err := writeJSONBlob(tw, written, ocispec.MediaTypeImageConfig, config)
		if err != nil {
			return err
		}
		manifest.Config = configDesc
		manifestDesc, err := writeJSONBlob(tw, written, ocispec.MediaTypeImageManifest, manifest)
		if err != nil {
			return err
		}
		manifestDesc.Platform = platform
		names := slices.Clone(image.Names)
		slices.Sort(names)
		for _, name := range names {
			full, err := FullName(name)
			if err != nil {
				return err
			}
			d := manifestDesc
			d.Annotations = map[string]string{"io.containerd.image.name": full}
			index.Manifests = append(index.Manifests, d)
		}
	}
	layout, err := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	if err != nil {
		return err
	}
	if err := writeEntry(tw, ocispec.ImageLayoutFile, layout); err != nil {
		return err
	}
	data, err := json.Marshal(index)
	if err != nil {
		return err
	}
	if err := writeEntry(tw, "index.json", data); err != nil {
		return err
	}
	return tw.Close()
}

func blobPath(d digest.Digest) string { return "blobs/" + d.Algorithm().String() + "/" + d.Encoded() }

func writeFileBlob(tw *tar.Writer, l Layer) error {
	f, err := os.Open(l.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(&tar.Header{Name: blobPath(l.Digest), Mode: 0o444, Size: l.Size, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, f, l.Size); err != nil {
		return fmt.Errorf("layer %s (%s): %w", l.Path, l.Digest, err)
	}
	return nil
}

func writeJSONBlob(tw *tar.Writer, written map[digest.Digest]bool, mediaType string, v any) (ocispec.Descriptor, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
	if written[d.Digest] {
		return d, nil
	}
	written[d.Digest] = true
	return d, writeEntry(tw, blobPath(d.Digest), data)
}

func writeEntry(tw *tar.Writer, name string, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o444, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

// ArchiveImage reads the index of an OCI image archive holding one image (make image's
// bin/image.tar): the name it is annotated with, as containerd imports it, and its manifest's
// digest.
func ArchiveImage(path string) (name string, manifest digest.Digest, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return "", "", fmt.Errorf("%s: no index.json: not an OCI image archive", path)
		}
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", path, err)
		}
		if h.Name != "index.json" {
			continue
		}
		var index ocispec.Index
		if err := json.NewDecoder(tr).Decode(&index); err != nil {
			return "", "", fmt.Errorf("%s: index.json: %w", path, err)
		}
		if len(index.Manifests) != 1 || index.Manifests[0].Annotations["io.containerd.image.name"] == "" {
			return "", "", fmt.Errorf("%s: index.json lists %d images, want one with the annotation io.containerd.image.name", path, len(index.Manifests))
		}
		return index.Manifests[0].Annotations["io.containerd.image.name"], index.Manifests[0].Digest, nil
	}
}
