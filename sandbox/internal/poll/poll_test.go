package poll

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	notYet, died := errors.New("not yet"), errors.New("the part died")
	tests := []struct {
		name    string
		passAt  int // the call at which check passes; 0: never
		stopped error
		want    string
	}{
		{name: "passes at once", passAt: 1},
		{name: "passes later", passAt: 3},
		{name: "the part died", stopped: died, want: "the part died"},
		{name: "never passes", want: "waiting for the thing: context deadline exceeded (last: not yet)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			calls := 0
			err := Until(ctx, time.Millisecond, "the thing", func(context.Context) error {
				calls++
				if calls == tt.passAt {
					return nil
				}
				return notYet
			}, func() error { return tt.stopped })
			if tt.want == "" {
				if err != nil || calls != tt.passAt {
					t.Fatalf("Until: %v after %d calls, want nil after %d", err, calls, tt.passAt)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Until: %v, want %q", err, tt.want)
			}
		})
	}
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte("1\n2\n3\n4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Tail(path, 2); got != "3\n4" {
		t.Errorf("Tail(2) = %q, want %q", got, "3\n4")
	}
	if got := Tail(path, 10); got != "1\n2\n3\n4" {
		t.Errorf("Tail(10) = %q", got)
	}
	if got := Tail(filepath.Join(t.TempDir(), "none"), 2); !strings.Contains(got, "no such file") {
		t.Errorf("Tail of a missing file = %q, want the reason", got)
	}
}
