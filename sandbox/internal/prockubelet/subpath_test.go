package prockubelet

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMakeSubPathTakesTheVolumesMode(t *testing.T) {
	volume := t.TempDir()
	if err := os.Chmod(volume, 0o777); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(volume, "serving-certs")
	if err := makeSubPath(volume, dir); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o777 {
		t.Errorf("subPath directory mode %v, want the volume's 0777", info.Mode().Perm())
	}
}
