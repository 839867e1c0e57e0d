package prockubelet

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
)

// Image is a local stand-in for a container image: a filesystem layer laid over the host's root
// and the image configuration a container runtime reads from a real image.
type Image struct {
	// Root is the absolute path of the layer.
	Root       string   `json:"root"`
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
	// User is the image's USER: a numeric uid, optionally with ":gid".
	User string   `json:"user,omitempty"`
	Env  []string `json:"env,omitempty"`
	// Size is the image's size in bytes, which a kubelet reports when it has pulled it.
	Size int64 `json:"size,omitempty"`
}

// ImageTable maps image references to local images. `make spark-images` writes it as
// images.json next to the layers it prepares. A table is never changed: With makes another.
type ImageTable struct {
	images map[string]Image
}

// LoadImageTable reads an images.json file; roots in it are relative to its directory.
func LoadImageTable(path string) (*ImageTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the image table: %w", err)
	}
	var file struct {
		Images map[string]Image `json:"images"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("decoding the image table %s: %w", path, err)
	}
	table := &ImageTable{images: map[string]Image{}}
	for ref, image := range file.Images {
		if !filepath.IsAbs(image.Root) {
			image.Root = filepath.Join(filepath.Dir(path), image.Root)
		}
		if info, err := os.Stat(image.Root); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("image %s in %s: its layer %s is not a directory", ref, path, image.Root)
		}
		table.images[normalizeImage(ref)] = image
	}
	return table, nil
}

// NewImageTable builds a table from images whose roots are absolute.
func NewImageTable(images map[string]Image) *ImageTable {
	table := &ImageTable{images: map[string]Image{}}
	for ref, image := range images {
		table.images[normalizeImage(ref)] = image
	}
	return table
}

// Lookup finds the image a pod names, as a registry would: docker.io and library/ are implied.
func (t *ImageTable) Lookup(ref string) (Image, bool) {
	if t == nil {
		return Image{}, false
	}
	image, ok := t.images[normalizeImage(ref)]
	return image, ok
}

// normalizeImage reduces an image reference to the form of Docker Hub's short names:
// "docker.io/library/spark:4.0.1" and "spark:4.0.1" are the same image, "spark" is "spark:latest".
func normalizeImage(ref string) string {
	ref = strings.TrimSpace(ref)
	for _, prefix := range []string{"docker.io/", "index.docker.io/", "registry-1.docker.io/"} {
		ref = strings.TrimPrefix(ref, prefix)
	}
	ref = strings.TrimPrefix(ref, "library/")
	name := ref
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name = name[:at]
	}
	lastSlash := strings.LastIndexByte(name, '/')
	if !strings.Contains(name[lastSlash+1:], ":") && !strings.Contains(ref, "@") {
		ref += ":latest"
	}
	return ref
}

// With returns a table with images added to the ones of t (t itself is unchanged); roots must be
// absolute.
func (t *ImageTable) With(images map[string]Image) *ImageTable {
	table := &ImageTable{images: map[string]Image{}}
	if t != nil {
		maps.Copy(table.images, t.images)
	}
	for ref, image := range images {
		table.images[normalizeImage(ref)] = image
	}
	return table
}

// All returns the table's images by normalized reference (a copy: the table stays unchanged), for
// a node that makes container images of them.
func (t *ImageTable) All() map[string]Image {
	if t == nil {
		return nil
	}
	return maps.Clone(t.images)
}
