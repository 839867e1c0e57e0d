package prockubelet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A container's output is kept as a CRI runtime keeps it and a kubelet reads it: a file per
// container run, a record per line, "<RFC3339Nano time> <stdout|stderr> <F|P> <content>",
// where a line longer than maxLogLine is split into partial (P) records that a full (F) one
// ends. The times are what --timestamps, --since and --since-time work on.

// maxLogLine is the longest content of one record, as a CRI runtime splits it.
const maxLogLine = 16 * 1024

// logTimeFormat is how a kubelet prints a record's time for --timestamps.
const logTimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// runLog is the log file of one container run, which its stdout and stderr write to.
type runLog struct {
	mu  sync.Mutex
	f   *os.File
	now func() time.Time
}

func (l *runLog) record(stream string, tag byte, content []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := l.now().UTC().AppendFormat(make([]byte, 0, len(content)+48), time.RFC3339Nano)
	line = append(line, ' ')
	line = append(line, stream...)
	line = append(line, ' ', tag, ' ')
	line = append(line, content...)
	line = append(line, '\n')
	// A write the disk refuses loses the line; the container must not block on its output.
	_, _ = l.f.Write(line)
}

// logStream is one output stream of a container run, cut into records.
type logStream struct {
	log     *runLog
	name    string
	pending []byte
}

func (s *logStream) Write(p []byte) (int, error) {
	s.pending = append(s.pending, p...)
	for {
		if i := bytes.IndexByte(s.pending, '\n'); i >= 0 && i <= maxLogLine {
			s.log.record(s.name, 'F', s.pending[:i])
			s.pending = s.pending[i+1:]
			continue
		}
		if len(s.pending) > maxLogLine {
			s.log.record(s.name, 'P', s.pending[:maxLogLine])
			s.pending = s.pending[maxLogLine:]
			continue
		}
		return len(p), nil
	}
}

// close records what the stream wrote after its last newline, as a full line, as a CRI
// runtime does when the stream ends.
func (s *logStream) close() {
	if len(s.pending) > 0 {
		s.log.record(s.name, 'F', s.pending)
		s.pending = nil
	}
}

// logRecord is one record of a log file.
type logRecord struct {
	time    time.Time
	stream  string
	partial bool
	content []byte
}

func parseLogRecord(line []byte) (logRecord, error) {
	timestamp, rest, ok1 := bytes.Cut(line, []byte{' '})
	stream, rest, ok2 := bytes.Cut(rest, []byte{' '})
	tag, content, ok3 := bytes.Cut(rest, []byte{' '})
	if !ok1 || !ok2 || !ok3 {
		return logRecord{}, fmt.Errorf("log record %q has too few fields", line)
	}
	t, err := time.Parse(time.RFC3339Nano, string(timestamp))
	if err != nil {
		return logRecord{}, fmt.Errorf("log record time: %w", err)
	}
	return logRecord{time: t, stream: string(stream), partial: string(tag) == "P", content: content}, nil
}

// APIError is an answer of the kubelet API other than 200: kube-apiserver passes its message on
// to the client (kubectl prints it).
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return e.Message }

// parseLogOptions reads the query kube-apiserver sends to /containerLogs (see LogLocation in
// its pod registry) as the kubelet decodes it; "tail" is the older name of tailLines.
func parseLogOptions(query url.Values) (*corev1.PodLogOptions, error) {
	invalidQuery := &APIError{Status: http.StatusBadRequest, Message: `{"message": "Unable to decode query."}`}
	flag := func(name string) bool {
		v := query.Get(name)
		return query.Has(name) && v != "0" && !strings.EqualFold(v, "false")
	}
	number := func(name string) (*int64, error) {
		v := query.Get(name)
		if v == "" {
			return nil, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, invalidQuery
		}
		return &n, nil
	}
	opts := &corev1.PodLogOptions{Follow: flag("follow"), Previous: flag("previous"), Timestamps: flag("timestamps")}
	if tail := query.Get("tail"); tail != "" {
		query.Del("tailLines")
		if tail != "all" {
			query.Set("tailLines", tail)
		}
	}
	var err error
	if opts.TailLines, err = number("tailLines"); err != nil {
		return nil, err
	}
	if opts.LimitBytes, err = number("limitBytes"); err != nil {
		return nil, err
	}
	if opts.SinceSeconds, err = number("sinceSeconds"); err != nil {
		return nil, err
	}
	if v := query.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, invalidQuery
		}
		opts.SinceTime = &metav1.Time{Time: t}
	}
	if v := query.Get("stream"); v != "" {
		stream := v
		opts.Stream = &stream
	}
	// The checks of the API's PodLogOptions validation, which the kubelet repeats.
	invalid := (opts.TailLines != nil && *opts.TailLines < 0) ||
		(opts.LimitBytes != nil && *opts.LimitBytes < 1) ||
		(opts.SinceSeconds != nil && (*opts.SinceSeconds < 1 || opts.SinceTime != nil)) ||
		(opts.Stream != nil && *opts.Stream != corev1.LogStreamAll && *opts.Stream != corev1.LogStreamStdout && *opts.Stream != corev1.LogStreamStderr) ||
		(opts.Stream != nil && *opts.Stream != corev1.LogStreamAll && opts.TailLines != nil)
	if invalid {
		return nil, &APIError{Status: http.StatusUnprocessableEntity, Message: `{"message": "Invalid request."}`}
	}
	return opts, nil
}

// containerLogs is an open log of a container run, positioned where the output starts.
type containerLogs struct {
	f *os.File
	// done, if not nil, is closed when the container run ends: the output follows the log
	// until then.
	done       <-chan struct{}
	timestamps bool
	since      time.Time
	stream     string // "" for both
	limit      int64  // -1 for no limit
}

// openLogs opens the log of a container of a pod this kubelet runs, as the kubelet's
// /containerLogs answers: the current run (or, with Previous, the one before), from its last
// TailLines lines. Errors are the kubelet's.
func (k *Kubelet) openLogs(namespace, name, container string, opts *corev1.PodLogOptions) (*containerLogs, error) {
	r := k.podByName(namespace, name)
	if r == nil {
		return nil, &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("pod %q does not exist", name)}
	}
	r.mu.Lock()
	status := r.statusOf(container)
	var restarts int32
	var state corev1.ContainerState
	proc := r.procs[container]
	if status != nil {
		restarts, state = status.RestartCount, *status.State.DeepCopy()
	}
	r.mu.Unlock()
	if status == nil {
		return nil, &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("container %q not found in pod %q", container, name)}
	}
	run := restarts
	if opts.Previous {
		if restarts == 0 {
			return nil, &APIError{Status: http.StatusBadRequest, Message: fmt.Sprintf("previous terminated container %q in pod %q not found", container, name)}
		}
		run = restarts - 1
	}
	f, err := os.Open(r.logPath(container, run))
	if err != nil {
		msg := fmt.Sprintf("container %q in pod %q is waiting to start - no logs yet", container, name)
		if state.Waiting != nil && state.Waiting.Reason != "" {
			msg = fmt.Sprintf("container %q in pod %q is waiting to start: %s", container, name, state.Waiting.Reason)
		}
		return nil, &APIError{Status: http.StatusBadRequest, Message: msg}
	}
	if opts.TailLines != nil {
		if err := seekTail(f, int(*opts.TailLines)); err != nil {
			f.Close()
			return nil, fmt.Errorf("reading the log of container %s of pod %s/%s: %w", container, namespace, name, err)
		}
	}
	logs := &containerLogs{f: f, timestamps: opts.Timestamps, limit: -1}
	if opts.Follow && !opts.Previous && state.Running != nil && proc != nil {
		logs.done = proc.done
	}
	if opts.LimitBytes != nil {
		logs.limit = *opts.LimitBytes
	}
	switch {
	case opts.SinceTime != nil:
		logs.since = opts.SinceTime.Time
	case opts.SinceSeconds != nil:
		logs.since = k.cfg.Now().Add(-time.Duration(*opts.SinceSeconds) * time.Second)
	}
	if opts.Stream != nil && *opts.Stream != corev1.LogStreamAll {
		logs.stream = strings.ToLower(*opts.Stream)
	}
	return logs, nil
}

func (l *containerLogs) Close() error { return l.f.Close() }

// WriteTo writes the log as the kubelet prints it: each record's content (with its time first
// for timestamps), a newline after full records, records before since and of the other stream
// left out, at most limit bytes. It returns at the end of the log or, following, when the run
// has ended and its log is drained, or ctx ends.
func (l *containerLogs) WriteTo(ctx context.Context, w io.Writer) error {
	var src io.Reader = l.f
	if l.done != nil {
		src = &follower{ctx: ctx, f: l.f, done: l.done}
	}
	reader := bufio.NewReader(src)
	written := int64(0)
	for {
		line, err := reader.ReadBytes('\n')
		if err == io.EOF {
			// What is left is a record still being written; it is not in the log yet.
			return nil
		}
		if err != nil {
			return err
		}
		record, err := parseLogRecord(line[:len(line)-1])
		if err != nil || record.time.Before(l.since) || (l.stream != "" && record.stream != l.stream) {
			continue
		}
		var out []byte
		if l.timestamps {
			out = append(record.time.AppendFormat(out, logTimeFormat), ' ')
		}
		out = append(out, record.content...)
		if !record.partial {
			out = append(out, '\n')
		}
		if l.limit >= 0 && written+int64(len(out)) >= l.limit {
			_, err := w.Write(out[:l.limit-written])
			return err
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		written += int64(len(out))
	}
}

// follower reads a growing log file until the container exits and the file is drained.
type follower struct {
	ctx  context.Context
	f    *os.File
	done <-chan struct{}
}

func (l *follower) Read(p []byte) (int, error) {
	for {
		n, err := l.f.Read(p)
		if n > 0 || (err != nil && err != io.EOF) {
			return n, err
		}
		select {
		case <-l.done:
			// One more read drains what the container wrote before it exited.
			n, err := l.f.Read(p)
			if n > 0 {
				return n, nil
			}
			return 0, err
		case <-l.ctx.Done():
			return 0, io.EOF
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// seekTail positions f at the start of its last n lines.
func seekTail(f *os.File, n int) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if n <= 0 {
		_, err := f.Seek(size, io.SeekStart)
		return err
	}
	const chunk = 64 * 1024
	newlines := 0
	pos := size
	buf := make([]byte, chunk)
	for pos > 0 {
		read := int64(chunk)
		if pos < read {
			read = pos
		}
		pos -= read
		if _, err := f.ReadAt(buf[:read], pos); err != nil && err != io.EOF {
			return err
		}
		for i := read - 1; i >= 0; i-- {
			if buf[i] != '\n' {
				continue
			}
			// The file's final newline ends the last line; it does not start one.
			if pos+i == size-1 {
				continue
			}
			newlines++
			if newlines == n {
				_, err := f.Seek(pos+i+1, io.SeekStart)
				return err
			}
		}
	}
	_, err = f.Seek(0, io.SeekStart)
	return err
}

// tailLines returns the output of the last n records of a log file, at most its last maxBytes,
// for a termination message taken from the log.
func tailLines(path string, n, maxBytes int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if err := seekTail(f, n); err != nil {
		return ""
	}
	var out bytes.Buffer
	if err := (&containerLogs{f: f, limit: -1}).WriteTo(context.Background(), &out); err != nil {
		return ""
	}
	text := strings.TrimRight(out.String(), "\n")
	if len(text) > maxBytes {
		text = text[len(text)-maxBytes:]
	}
	return text
}
