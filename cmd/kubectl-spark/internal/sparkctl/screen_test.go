package sparkctl

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLiveBlockRedrawsInPlace: the block is redrawn by moving the cursor up over it and erasing
// to the end of the screen; log text scrolls by above it, whole lines only; lines wider than the
// terminal are cut so that none wraps (a wrapped line would throw the cursor movement off).
func TestLiveBlockRedrawsInPlace(t *testing.T) {
	var out bytes.Buffer
	b := &liveBlock{w: &out, width: 12}
	b.show([]string{"pi RUNNING", "Tasks: 1/4"})
	_, _ = io.WriteString(b, "log line 1\nlog li")
	_, _ = io.WriteString(b, "ne 2")
	b.show([]string{"pi RUNNING", "Tasks: 3/4 and a long tail"})
	_, _ = io.WriteString(b, "\n")
	_, _ = io.WriteString(b, "unended")
	b.close()
	assert.Equal(t, ""+
		"pi RUNNING\nTasks: 1/4\n"+
		"\x1b[2A\r\x1b[J"+"log line 1\n"+"pi RUNNING\nTasks: 1/4\n"+
		"\x1b[2A\r\x1b[J"+"pi RUNNING\nTasks: 3/4…\n"+
		"\x1b[2A\r\x1b[J"+"log line 2\n"+"pi RUNNING\nTasks: 3/4…\n"+
		"\x1b[2A\r\x1b[J"+"unended\n"+"pi RUNNING\nTasks: 3/4…\n",
		out.String())
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		line  string
		width int
		want  string
	}{
		{"short", 80, "short"},
		{"exactly 9", 10, "exactly 9"},
		{"exactly 10", 10, "exactly …"},
		{"Stage 1: [===>]", 0, "Stage 1: [===>]"},
		{"ünïcödé wide", 6, "ünïc…"},
	} {
		assert.Equal(t, tc.want, fit(tc.line, tc.width), "%q at %d", tc.line, tc.width)
	}
}

func TestBar(t *testing.T) {
	for _, tc := range []struct {
		done, total int
		want        string
	}{
		{0, 0, "[                              ]   0%"},
		{0, 40, "[>                             ]   0%"},
		{20, 40, "[===============>              ]  50%"},
		{39, 40, "[=============================>]  97%"},
		{40, 40, "[==============================] 100%"},
		{50, 40, "[==============================] 100%"},
	} {
		assert.Equal(t, tc.want, bar(tc.done, tc.total), "%d/%d", tc.done, tc.total)
	}
}

func TestBytesText(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		assert.Equal(t, want, bytesText(n))
	}
}
