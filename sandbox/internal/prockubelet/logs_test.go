package prockubelet

import (
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLogStreamRecords(t *testing.T) {
	long := strings.Repeat("x", maxLogLine)
	for _, tc := range []struct {
		name   string
		writes []string
		want   []string // "<stream> <tag> <content>" per record
	}{
		{"lines", []string{"a\nb\n"}, []string{"stdout F a", "stdout F b"}},
		{"a line in several writes", []string{"hel", "lo\nwor", "ld\n"}, []string{"stdout F hello", "stdout F world"}},
		{"an empty line", []string{"\n"}, []string{"stdout F "}},
		{"no newline at the end: a full line when the stream ends", []string{"prompt> "}, []string{"stdout F prompt> "}},
		{"a line of the longest length", []string{long + "\n"}, []string{"stdout F " + long}},
		{"a longer line: partial records, then a full one", []string{long + "yz\n"}, []string{"stdout P " + long, "stdout F yz"}},
		{"a longer line ending with the stream", []string{long, "y"}, []string{"stdout P " + long, "stdout F y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "0.log")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			stream := &logStream{log: &runLog{f: f, now: time.Now}, name: "stdout"}
			for _, w := range tc.writes {
				if n, err := stream.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			stream.close()
			f.Close()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, line := range strings.SplitAfter(string(data), "\n") {
				if line == "" {
					continue
				}
				record, err := parseLogRecord([]byte(strings.TrimSuffix(line, "\n")))
				if err != nil {
					t.Fatal(err)
				}
				tag := "F"
				if record.partial {
					tag = "P"
				}
				got = append(got, record.stream+" "+tag+" "+string(record.content))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("records\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

func TestParseLogOptions(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  string // the options as kube-apiserver would send them back, or the error
	}{
		{"", ""},
		{"follow=true&previous=true&timestamps=true", "follow=true&previous=true&timestamps=true"},
		{"follow=false&previous=0", ""},
		{"tailLines=10&limitBytes=100&sinceSeconds=5", "limitBytes=100&sinceSeconds=5&tailLines=10"},
		{"tail=3&tailLines=10", "tailLines=3"},
		{"tail=all&tailLines=10", ""},
		{"sinceTime=2026-01-02T03:04:05Z", "sinceTime=2026-01-02T03:04:05Z"},
		{"stream=All&tailLines=1", "stream=All&tailLines=1"},
		{"tailLines=ten", `{"message": "Unable to decode query."}`},
		{"sinceTime=yesterday", `{"message": "Unable to decode query."}`},
		{"tailLines=-1", `{"message": "Invalid request."}`},
		{"limitBytes=0", `{"message": "Invalid request."}`},
		{"sinceSeconds=0", `{"message": "Invalid request."}`},
		{"sinceSeconds=5&sinceTime=2026-01-02T03:04:05Z", `{"message": "Invalid request."}`},
		{"stream=Both", `{"message": "Invalid request."}`},
		{"stream=Stderr&tailLines=1", `{"message": "Invalid request."}`},
	} {
		t.Run(tc.query, func(t *testing.T) {
			query, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			opts, err := parseLogOptions(query)
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				back := url.Values{}
				for name, set := range map[string]bool{"follow": opts.Follow, "previous": opts.Previous, "timestamps": opts.Timestamps} {
					if set {
						back.Set(name, "true")
					}
				}
				for name, n := range map[string]*int64{"tailLines": opts.TailLines, "limitBytes": opts.LimitBytes, "sinceSeconds": opts.SinceSeconds} {
					if n != nil {
						back.Set(name, strconv.FormatInt(*n, 10))
					}
				}
				if opts.SinceTime != nil {
					back.Set("sinceTime", opts.SinceTime.UTC().Format(time.RFC3339))
				}
				if opts.Stream != nil {
					back.Set("stream", *opts.Stream)
				}
				got, _ = url.QueryUnescape(back.Encode())
			}
			if got != tc.want {
				t.Errorf("parseLogOptions(%q) = %q, want %q", tc.query, got, tc.want)
			}
		})
	}
}
