package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// entry is one file of a layer, as the layer's tar stream has it.
type entry struct {
	name     string // without a leading "/" or "./"; directories without a trailing "/"
	typeflag byte
	mode     int64
	uid, gid int
	linkname string
	data     []byte
}

// tree is a layer's files by name; writeLayer writes them in name order.
type tree map[string]entry

func (t tree) dir(name string, mode int64, uid int) {
	t[name] = entry{name: name, typeflag: tar.TypeDir, mode: mode, uid: uid, gid: uid}
}

func (t tree) file(name string, mode int64, data []byte) {
	t[name] = entry{name: name, typeflag: tar.TypeReg, mode: mode, data: data}
}

// parents adds the directories above every entry that are missing, owned by root.
func (t tree) parents() {
	for name := range t {
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			if _, ok := t[d]; !ok {
				t.dir(d, 0o755, 0)
			}
		}
	}
}

// addPackage adds the files of a Debian package's data tarball (dpkg-deb --fsys-tarfile) that
// keep matches, with the owners and modes the package gives them.
func (t tree) addPackage(r io.Reader, keep func(name string) bool) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(strings.TrimPrefix(path.Clean("/"+h.Name), "/"), "/")
		if name == "" || !keep(name) {
			continue
		}
		e := entry{name: name, typeflag: h.Typeflag, mode: h.Mode & 0o7777, uid: h.Uid, gid: h.Gid, linkname: h.Linkname}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeSymlink:
		case tar.TypeReg:
			if e.data, err = io.ReadAll(tr); err != nil {
				return err
			}
		case tar.TypeLink:
			// A hard link names a file of the package by its path in the tarball.
			e.linkname = strings.TrimPrefix(path.Clean("/"+h.Linkname), "/")
		default:
			return fmt.Errorf("%s: unexpected tar entry type %q", h.Name, h.Typeflag)
		}
		t[name] = e
	}
}

// writeLayer writes the tree as a reproducible layer: entries sorted by name (a directory before
// what it holds), every time the same, no user or group names, gzip without a name or time.
func writeLayer(t tree, mtime time.Time) ([]byte, error) {
	names := make([]string, 0, len(t))
	for name := range t {
		names = append(names, name)
	}
	slices.Sort(names)
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, name := range names {
		e := t[name]
		h := &tar.Header{
			Typeflag: e.typeflag, Name: e.name, Linkname: e.linkname, Mode: e.mode,
			Uid: e.uid, Gid: e.gid, ModTime: mtime,
		}
		switch e.typeflag {
		case tar.TypeDir:
			h.Name += "/"
		case tar.TypeReg:
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	var compressed bytes.Buffer
	zw, err := gzip.NewWriterLevel(&compressed, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return compressed.Bytes(), nil
}

// readFile is os.ReadFile with the file's name in the error.
func readFile(name string) ([]byte, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return data, nil
}
