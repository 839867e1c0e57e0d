// Package ociimage makes container images on this machine, with no registry and no Docker: layers
// from directories and tar files, images from layers and the configuration a runtime reads, and
// the OCI image archive that `ctr images import` loads into containerd.
package ociimage

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/opencontainers/go-digest"
)

// Layer is one uncompressed layer tar: its digest is both the blob's and the diff ID.
type Layer struct {
	Path   string
	Digest digest.Digest
	Size   int64
}

// LayerCache keeps the layers made from directories and the digests of tar files, in Dir, keyed
// by a fingerprint of what they were made from (paths, sizes, modes, owners and times), so that a
// layer is written and hashed again only when its source changed.
type LayerCache struct {
	Dir string
}

// FromTar is the layer of an existing uncompressed tar file.
func (c LayerCache) FromTar(path string) (Layer, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Layer{}, err
	}
	key := fingerprint(fmt.Sprintf("tar %s %d %d", path, info.Size(), info.ModTime().UnixNano()))
	sumFile := filepath.Join(c.Dir, key+".sha256")
	if data, err := os.ReadFile(sumFile); err == nil {
		if d, err := digest.Parse(strings.TrimSpace(string(data))); err == nil {
			return Layer{Path: path, Digest: d, Size: info.Size()}, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return Layer{}, err
	}
	defer f.Close()
	d, err := digest.SHA256.FromReader(f)
	if err != nil {
		return Layer{}, fmt.Errorf("hashing %s: %w", path, err)
	}
	if err := writeAtomic(sumFile, []byte(d.String()+"\n")); err != nil {
		return Layer{}, err
	}
	return Layer{Path: path, Digest: d, Size: info.Size()}, nil
}

// FromDir is the layer holding the tree under dir, its root the image's root: owners, modes,
// times, symbolic and hard links as they are on disk.
func (c LayerCache) FromDir(dir string) (Layer, error) {
	key, err := treeFingerprint(dir)
	if err != nil {
		return Layer{}, err
	}
	path := filepath.Join(c.Dir, key+".tar")
	if info, err := os.Stat(path); err == nil {
		if data, err := os.ReadFile(path + ".sha256"); err == nil {
			if d, err := digest.Parse(strings.TrimSpace(string(data))); err == nil {
				return Layer{Path: path, Digest: d, Size: info.Size()}, nil
			}
		}
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return Layer{}, err
	}
	tmp, err := os.CreateTemp(c.Dir, ".layer-*")
	if err != nil {
		return Layer{}, err
	}
	defer os.Remove(tmp.Name())
	hash := digest.SHA256.Digester()
	counter := &countingWriter{}
	if err := WriteTree(io.MultiWriter(tmp, hash.Hash(), counter), dir); err != nil {
		tmp.Close()
		return Layer{}, fmt.Errorf("the layer of %s: %w", dir, err)
	}
	if err := tmp.Close(); err != nil {
		return Layer{}, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return Layer{}, err
	}
	d := hash.Digest()
	if err := writeAtomic(path+".sha256", []byte(d.String()+"\n")); err != nil {
		return Layer{}, err
	}
	return Layer{Path: path, Digest: d, Size: counter.n}, nil
}

// WriteTree writes the tree under dir to w as a tar whose names are relative to dir, in lexical
// order, so that the same tree always makes the same bytes.
func WriteTree(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	links := map[[2]uint64]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		target := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(path); err != nil {
				return err
			}
		}
		header, err := tar.FileInfoHeader(info, target)
		if err != nil {
			return err
		}
		header.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			header.Name += "/"
		}
		// Owners by number only, times to the second: nothing of this machine's user database or
		// clock beyond what the files carry.
		header.Uname, header.Gname = "", ""
		header.ModTime = info.ModTime().Truncate(time.Second)
		header.AccessTime, header.ChangeTime = time.Time{}, time.Time{}
		header.Format = tar.FormatPAX
		if st, ok := info.Sys().(*syscall.Stat_t); ok && info.Mode().IsRegular() && st.Nlink > 1 {
			id := [2]uint64{st.Dev, st.Ino}
			if first, seen := links[id]; seen {
				header.Typeflag, header.Linkname, header.Size = tar.TypeLink, first, 0
			} else {
				links[id] = header.Name
			}
		}
		if err := tw.WriteHeader(header); err != nil {
			return err
		}
		if header.Typeflag != tar.TypeReg {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.CopyN(tw, f, header.Size); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// treeFingerprint names the tree under dir by what a layer keeps of it.
func treeFingerprint(dir string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "tree v1\n")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return errors.New("no stat_t")
		}
		fmt.Fprintf(h, "%q %v %d %d:%d %d %d\n", path, info.Mode(), info.Size(), st.Uid, st.Gid, info.ModTime().Unix(), st.Ino)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

func fingerprint(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:32]
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
