// Package opbench holds the pure parts of make bench-operators (sandbox/cmd/bench-operators):
// the figures one operator's run yields, their percentiles, the table and the ratios between
// two operators, and the readers of /proc and of kube-apiserver's metrics they come from.
package opbench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Run is what one operator did with N applications created at once.
type Run struct {
	// Operator names what ran them ("sparkhooks", "ceiling", "Kubeflow").
	Operator string
	N        int
	// AllDrivers and AllCompleted are the times from the first create to the last driver Pod
	// seen and to the last application seen finished.
	AllDrivers, AllCompleted time.Duration
	// DriverLatency is, per application, the time from its create call's answer to its driver
	// Pod's first watch event.
	DriverLatency []time.Duration
	// OperatorCPU and MachineCPU are CPU-seconds used during the run: by the operator's
	// processes, and by the whole machine (every process, every engineer's).
	OperatorCPU, MachineCPU float64
	// PeakRSS is the largest sum sampled of the resident memory of the operator's processes and
	// the processes they run.
	PeakRSS uint64
	// APIRequests is how many requests kube-apiserver served during the run.
	APIRequests float64
	// Load is /proc/loadavg's first three fields at the run's end.
	Load string
}

// AppsPerMinute is N over the time to all COMPLETED.
func (r Run) AppsPerMinute() float64 {
	if r.AllCompleted <= 0 {
		return 0
	}
	return float64(r.N) / r.AllCompleted.Minutes()
}

func (r Run) perApp(v float64) float64 {
	if r.N == 0 {
		return 0
	}
	return v / float64(r.N)
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of ds; 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// figure is one column of the table: how it reads and its value of a run.
type figure struct {
	name  string
	value func(Run) float64
	text  func(Run) string
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func millis(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

var figures = []figure{
	{"all drivers", func(r Run) float64 { return r.AllDrivers.Seconds() }, func(r Run) string { return seconds(r.AllDrivers) }},
	{"all COMPLETED", func(r Run) float64 { return r.AllCompleted.Seconds() }, func(r Run) string { return seconds(r.AllCompleted) }},
	{"apps/min", Run.AppsPerMinute, func(r Run) string { return fmt.Sprintf("%.0f", r.AppsPerMinute()) }},
	{"driver p50", func(r Run) float64 { return Percentile(r.DriverLatency, 50).Seconds() }, func(r Run) string { return millis(Percentile(r.DriverLatency, 50)) }},
	{"driver p90", func(r Run) float64 { return Percentile(r.DriverLatency, 90).Seconds() }, func(r Run) string { return millis(Percentile(r.DriverLatency, 90)) }},
	{"driver p99", func(r Run) float64 { return Percentile(r.DriverLatency, 99).Seconds() }, func(r Run) string { return millis(Percentile(r.DriverLatency, 99)) }},
	{"operator CPU-s/app", func(r Run) float64 { return r.perApp(r.OperatorCPU) }, func(r Run) string { return fmt.Sprintf("%.3f", r.perApp(r.OperatorCPU)) }},
	{"machine CPU-s/app", func(r Run) float64 { return r.perApp(r.MachineCPU) }, func(r Run) string { return fmt.Sprintf("%.3f", r.perApp(r.MachineCPU)) }},
	{"peak operator RSS", func(r Run) float64 { return float64(r.PeakRSS) }, func(r Run) string { return fmt.Sprintf("%d MiB", r.PeakRSS>>20) }},
	{"API requests/app", func(r Run) float64 { return r.perApp(r.APIRequests) }, func(r Run) string { return fmt.Sprintf("%.1f", r.perApp(r.APIRequests)) }},
}

// WriteTable writes the runs as a Markdown table, one row each, with the load at each run's end.
func WriteTable(w io.Writer, runs []Run) error {
	head := []string{"operator", "N"}
	for _, f := range figures {
		head = append(head, f.name)
	}
	head = append(head, "load at end")
	var b strings.Builder
	row(&b, head)
	row(&b, slices.Repeat([]string{"---"}, len(head)))
	for _, r := range runs {
		cells := []string{r.Operator, fmt.Sprint(r.N)}
		for _, f := range figures {
			cells = append(cells, f.text(r))
		}
		row(&b, append(cells, r.Load))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func row(b *strings.Builder, cells []string) {
	b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
}

// Ratio is one figure of run a divided by the same figure of run b.
type Ratio struct {
	Figure string
	// Value is a's figure over b's; NaN where b's is zero.
	Value float64
}

// Ratios divides each figure of a by b's.
func Ratios(a, b Run) []Ratio {
	out := make([]Ratio, 0, len(figures))
	for _, f := range figures {
		v := math.NaN()
		if d := f.value(b); d != 0 {
			v = f.value(a) / d
		}
		out = append(out, Ratio{Figure: f.name, Value: v})
	}
	return out
}

// WriteRatios writes a line of a ÷ b's figures, at the same N.
func WriteRatios(w io.Writer, a, b Run) error {
	parts := make([]string, 0, len(figures))
	for _, r := range Ratios(a, b) {
		text := "n/a"
		if !math.IsNaN(r.Value) {
			text = fmt.Sprintf("%.3g", r.Value)
		}
		parts = append(parts, r.Figure+" "+text)
	}
	_, err := fmt.Fprintf(w, "%s ÷ %s at N = %d: %s\n", a.Operator, b.Operator, a.N, strings.Join(parts, ", "))
	return err
}
