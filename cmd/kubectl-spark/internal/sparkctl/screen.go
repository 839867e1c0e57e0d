package sparkctl

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"golang.org/x/term"
)

// ANSI control sequences of the redraw: cursor up N lines, erase from the cursor to the end of
// the screen.
const (
	ansiUp        = "\x1b[%dA"
	ansiEraseDown = "\x1b[J"
)

// terminalWidth reports whether w is a terminal, and its width in columns (0 if unknown).
func terminalWidth(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0, true
	}
	return width, true
}

// liveBlock keeps a block of lines at the bottom of a terminal and redraws it in place; text
// written to it (a driver's log, state changes) scrolls by above the block. It is safe for use
// by the log's goroutine and the poller's at once.
type liveBlock struct {
	mu      sync.Mutex
	w       io.Writer
	width   int // columns; lines are cut to fit so that none wraps and the redraw stays in place
	drawn   int // lines of the block on screen
	block   []string
	partial []byte // text after the last newline written, held until its line ends
}

// Write prints text above the block: complete lines at once, a partial line once it ends.
func (b *liveBlock) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partial = append(b.partial, p...)
	end := bytes.LastIndexByte(b.partial, '\n')
	if end < 0 {
		return len(p), nil
	}
	text := b.partial[:end+1]
	b.erase()
	_, err := b.w.Write(text)
	b.partial = append([]byte(nil), b.partial[end+1:]...)
	b.draw()
	return len(p), err
}

// show replaces the block; the same block again is not redrawn.
func (b *liveBlock) show(lines []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn > 0 && slices.Equal(lines, b.block) {
		return
	}
	b.erase()
	b.block = lines
	b.draw()
}

// endLine prints a partial line written so far as a line of its own: the text it belongs to
// has ended (a log stream), and what comes next must not join it.
func (b *liveBlock) endLine() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.partial) > 0 {
		b.erase()
		fmt.Fprintf(b.w, "%s\n", b.partial)
		b.partial = nil
		b.draw()
	}
}

// close leaves the block on screen as the last thing drawn, and prints a partial line.
func (b *liveBlock) close() {
	b.endLine()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drawn = 0
}

func (b *liveBlock) erase() {
	if b.drawn > 0 {
		fmt.Fprintf(b.w, ansiUp+"\r"+ansiEraseDown, b.drawn)
		b.drawn = 0
	}
}

func (b *liveBlock) draw() {
	for _, line := range b.block {
		fmt.Fprintln(b.w, fit(line, b.width))
	}
	b.drawn = len(b.block)
}

// fit cuts a line to width-1 columns (the last column would make some terminals wrap).
func fit(line string, width int) string {
	if width <= 1 {
		return line
	}
	runes := []rune(line)
	if len(runes) < width {
		return line
	}
	return string(runes[:width-2]) + "…"
}
