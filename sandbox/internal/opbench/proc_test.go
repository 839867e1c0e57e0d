package opbench

import (
	"slices"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, stat string
		want       ProcStat
		err        bool
	}{
		{name: "plain", stat: "794 (cat) R 736 736 31797 0 -1 4194304 101 0 0 0 250 150 0 0 20 0 1 0 2650906 3133440 390", want: ProcStat{PPID: 736, CPU: 4}},
		{name: "with its children's", stat: "794 (java) S 736 736 31797 0 -1 4194304 101 0 0 0 250 150 300 50 20 0 1 0 2650906 3133440 390", want: ProcStat{PPID: 736, CPU: 7.5}},
		{name: "a name with spaces and parentheses", stat: "9 (a (b) c) S 1 9 9 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 6 7", want: ProcStat{PPID: 1, CPU: 0.1}},
		{name: "no name", stat: "9 S 1", err: true},
		{name: "cut short", stat: "9 (x) S 1 2 3", err: true},
		{name: "a field that is no number", stat: "9 (x) S 1 9 9 0 -1 0 0 0 0 0 7 x 0 0 20", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProcStat([]byte(tt.stat))
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("ParseProcStat = %+v, %v; want %+v, error %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func TestParseMachineCPU(t *testing.T) {
	// user 100 nice 50 system 50 idle 1000 iowait 300 irq 0 softirq 100 steal 0: 300 busy.
	got, err := ParseMachineCPU([]byte("cpu  100 50 50 1000 300 0 100 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n"))
	if err != nil || got != 3 {
		t.Errorf("ParseMachineCPU = %v, %v; want 3", got, err)
	}
	if _, err := ParseMachineCPU([]byte("cpu0 1 2 3 4 5 6 7 8\n")); err == nil {
		t.Error("a /proc/stat without its cpu line was read")
	}
}

func TestParseRSS(t *testing.T) {
	got, err := ParseRSS([]byte("Name:\tx\nVmPeak:\t 9000 kB\nVmRSS:\t    2048 kB\nThreads: 3\n"))
	if err != nil || got != 2<<20 {
		t.Errorf("ParseRSS = %v, %v; want %v", got, err, 2<<20)
	}
	if _, err := ParseRSS([]byte("Name:\tkthreadd\n")); err == nil {
		t.Error("a status without VmRSS was read")
	}
}

func TestParseRequestTotal(t *testing.T) {
	metrics := `# HELP apiserver_request_total [STABLE] Counter of apiserver requests
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",component="apiserver",verb="GET"} 120
apiserver_request_total{code="201",component="apiserver",verb="POST"} 3.5e+01
apiserver_request_total_other{code="200"} 1000
apiserver_request_duration_seconds_count{verb="GET"} 500
`
	got, err := ParseRequestTotal([]byte(metrics))
	if err != nil || got != 155 {
		t.Errorf("ParseRequestTotal = %v, %v; want 155", got, err)
	}
	if _, err := ParseRequestTotal([]byte("process_cpu_seconds_total 3\n")); err == nil {
		t.Error("metrics without apiserver_request_total were read")
	}
}

func TestDescendants(t *testing.T) {
	// 1 ─ 10 ─ 100 ─ 1000; 1 ─ 11; 2 ─ 20 ─ 200.
	parents := map[int]int{10: 1, 11: 1, 100: 10, 1000: 100, 20: 2, 200: 20, 1: 0, 2: 0}
	tests := []struct {
		roots, want []int
	}{
		{[]int{10}, []int{10, 100, 1000}},
		{[]int{10, 20}, []int{10, 20, 100, 200, 1000}},
		{[]int{1, 10}, []int{1, 10, 11, 100, 1000}},
		{[]int{1000}, []int{1000}},
		{nil, []int{}},
	}
	for _, tt := range tests {
		if got := Descendants(parents, tt.roots); !slices.Equal(got, tt.want) {
			t.Errorf("Descendants(%v) = %v, want %v", tt.roots, got, tt.want)
		}
	}
}
