package podinit

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolveInRootFollowsLinksInsideTheRoot(t *testing.T) {
	root := t.TempDir()
	for _, dir := range []string{"run", "usr/lib", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, dest := range map[string]string{
		"var":     "", // a directory, see below
		"lib":     "usr/lib",
		"etc/cfg": "../../../../opt/conf", // climbs above the root: stays at the root
		"loop":    "/loop",
	} {
		if dest == "" {
			if err := os.Mkdir(filepath.Join(root, link), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Symlink(dest, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/run", filepath.Join(root, "var", "run")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/var/run/secrets/kubernetes.io/serviceaccount", "/run/secrets/kubernetes.io/serviceaccount"},
		{"/lib/x.so", "/usr/lib/x.so"},
		{"/etc/cfg/spark.conf", "/opt/conf/spark.conf"},
		{"/opt/spark/../spark/conf", "/opt/spark/conf"},
		{"/../../etc", "/etc"},
	} {
		got, err := resolveInRoot(root, tc.path)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if want := filepath.Join(root, tc.want); got != want {
			t.Errorf("%s resolved to %s, want %s", tc.path, got, want)
		}
	}
	if _, err := resolveInRoot(root, "/loop/x"); err == nil {
		t.Error("a link to itself resolved without an error")
	}
}
