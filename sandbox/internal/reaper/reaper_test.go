package reaper

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReap(t *testing.T) {
	for _, tc := range []struct {
		name        string
		done        bool
		wantRemoved bool
		wantOutput  string
	}{
		{"the sandbox died", false, true, "sparkhooks-local ended without cleaning up; its reaper removed the pod network skb123456, "},
		{"the sandbox cleaned up", true, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sparkhooks-local-1")
			if err := os.MkdirAll(filepath.Join(dir, "cluster", "logs"), 0o755); err != nil {
				t.Fatal(err)
			}
			var in bytes.Buffer
			for _, rec := range []record{{Remove: dir}, {Unmount: dir}, {Network: "skb123456"}, {Done: tc.done}} {
				data, _ := json.Marshal(rec)
				in.Write(append(data, '\n'))
			}
			mountInfo := filepath.Join(t.TempDir(), "mountinfo")
			if err := os.WriteFile(mountInfo, []byte("22 1 0:21 / /proc rw - proc proc rw\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var networks []string
			var out bytes.Buffer
			reap(&in, &out, sweeper{mountInfo: mountInfo, removeNetwork: func(_ context.Context, bridge string) error {
				networks = append(networks, bridge)
				return nil
			}})
			_, err := os.Stat(dir)
			if removed := os.IsNotExist(err); removed != tc.wantRemoved {
				t.Errorf("data dir removed: %v, want %v", removed, tc.wantRemoved)
			}
			if tc.wantRemoved != slices.Equal(networks, []string{"skb123456"}) {
				t.Errorf("networks removed: %q", networks)
			}
			if !strings.HasPrefix(out.String(), tc.wantOutput) || (tc.wantOutput == "") != (out.Len() == 0) {
				t.Errorf("output %q, want %q…", out.String(), tc.wantOutput)
			}
		})
	}
}

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/plain":             "/tmp/plain",
		`/tmp/with\040space`:     "/tmp/with space",
		`/tmp/trailing\04`:       `/tmp/trailing\04`,
		`/tmp/tab\011and\134bsl`: "/tmp/tab\tand\\bsl",
	} {
		if got := unescapeOctal(in); got != want {
			t.Errorf("unescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}
