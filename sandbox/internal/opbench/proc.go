package opbench

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// userHZ is the unit of /proc's CPU times: USER_HZ, 100 on every Linux architecture Go targets.
const userHZ = 100

// ProcStat is what a run reads of /proc/<pid>/stat.
type ProcStat struct {
	PPID int
	// CPU is user plus system CPU-seconds.
	CPU float64
}

// ParseProcStat reads /proc/<pid>/stat. The command name (field 2) may hold spaces and
// parentheses, so the fields are counted from its last ')'.
func ParseProcStat(stat []byte) (ProcStat, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return ProcStat{}, fmt.Errorf("no command name in %q", stat)
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15).
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 13 {
		return ProcStat{}, fmt.Errorf("%d fields after the command name in %q", len(fields), stat)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return ProcStat{}, fmt.Errorf("ppid: %w", err)
	}
	utime, err := strconv.ParseUint(fields[11], 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseUint(fields[12], 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("stime: %w", err)
	}
	return ProcStat{PPID: ppid, CPU: float64(utime+stime) / userHZ}, nil
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
