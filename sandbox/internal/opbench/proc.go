package opbench

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// userHZ is the unit of /proc's CPU times: USER_HZ, 100 on every Linux architecture Go targets.
const userHZ = 100

// ProcStat is what a run reads of /proc/<pid>/stat.
type ProcStat struct {
	PPID int
	// CPU is user plus system CPU-seconds, the process's own and its waited-for children's
	// (Kubeflow's controller waits for each spark-submit it runs).
	CPU float64
}

// ParseProcStat reads /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted from its last ')'.
func ParseProcStat(stat []byte) (ProcStat, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return ProcStat{}, fmt.Errorf("no command name in %q", stat)
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 15 {
		return ProcStat{}, fmt.Errorf("%d fields after the command name in %q", len(fields), stat)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return ProcStat{}, fmt.Errorf("ppid: %w", err)
	}
	var ticks uint64
	for i, name := range map[int]string{11: "utime", 12: "stime", 13: "cutime", 14: "cstime"} {
		v, err := strconv.ParseUint(fields[i], 10, 64)
		if err != nil {
			return ProcStat{}, fmt.Errorf("%s: %w", name, err)
		}
		ticks += v
	}
	return ProcStat{PPID: ppid, CPU: float64(ticks) / userHZ}, nil
}

// Descendants are roots and every process below them, given each process's parent.
func Descendants(parents map[int]int, roots []int) []int {
	children := map[int][]int{}
	for pid, ppid := range parents {
		children[ppid] = append(children[ppid], pid)
	}
	seen := map[int]bool{}
	out := []int{}
	queue := slices.Clone(roots)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	slices.Sort(out)
	return out
}

// ParseMachineCPU reads the CPU-seconds the whole machine has spent busy from /proc/stat's
// "cpu" line: every state but idle and iowait (guest time is already in user).
func ParseMachineCPU(stat []byte) (float64, error) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, fmt.Errorf("no cpu line in /proc/stat: %q", line)
	}
	var busy uint64
	// user nice system idle iowait irq softirq steal.
	for i, f := range fields[1:9] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat field %d: %w", i+1, err)
		}
		if i != 3 && i != 4 {
			busy += v
		}
	}
	return float64(busy) / userHZ, nil
}

// ParseRSS reads VmRSS from /proc/<pid>/status, in bytes.
func ParseRSS(status []byte) (uint64, error) {
	s := bufio.NewScanner(bytes.NewReader(status))
	for s.Scan() {
		value, ok := strings.CutPrefix(s.Text(), "VmRSS:")
		if !ok {
			continue
		}
		kib, ok := strings.CutSuffix(strings.TrimSpace(value), " kB")
		if !ok {
			return 0, fmt.Errorf("VmRSS %q is not in kB", value)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(kib), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("VmRSS: %w", err)
		}
		return n << 10, nil
	}
	return 0, fmt.Errorf("no VmRSS in /proc/<pid>/status")
}

// ParseRequestTotal sums apiserver_request_total over every label set in kube-apiserver's
// /metrics text: every request it answered since it started.
func ParseRequestTotal(metrics []byte) (float64, error) {
	var total float64
	found := false
	s := bufio.NewScanner(bytes.NewReader(metrics))
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") && !strings.HasPrefix(line, "apiserver_request_total ") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", line, err)
		}
		total += v
		found = true
	}
	if err := s.Err(); err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("no apiserver_request_total in the metrics")
	}
	return total, nil
}
