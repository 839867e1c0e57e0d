package opbench

import (
	"math"
	"strings"
	"testing"
	"time"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // reversed: Percentile sorts
	}
	tests := []struct {
		name string
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 50, 50 * time.Millisecond},
		{"p90 of 1..100", ms(hundred...), 90, 90 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p100 of 1..100", ms(hundred...), 100, 100 * time.Millisecond},
		{"p50 of four is the second", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p99 of three is the largest", ms(1, 3, 2), 99, 3 * time.Millisecond},
		{"a tiny p is the smallest", ms(5, 6), 0.1, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tt.ds...)
			if got := Percentile(tt.ds, tt.p); got != tt.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tt.ds, tt.p, got, tt.want)
			}
			for i := range in {
				if in[i] != tt.ds[i] {
					t.Fatalf("Percentile reordered its input: %v", tt.ds)
				}
			}
		})
	}
}

func TestAppsPerMinute(t *testing.T) {
	tests := []struct {
		r    Run
		want float64
	}{
		{Run{N: 100, AllCompleted: 30 * time.Second}, 200},
		{Run{N: 1000, AllCompleted: 2 * time.Minute}, 500},
		{Run{N: 10}, 0},
	}
	for _, tt := range tests {
		if got := tt.r.AppsPerMinute(); got != tt.want {
			t.Errorf("%+v: %v apps/min, want %v", tt.r, got, tt.want)
		}
	}
}

func TestRatios(t *testing.T) {
	a := Run{Operator: "sparkhooks", N: 100, AllDrivers: 10 * time.Second, AllCompleted: 20 * time.Second,
		DriverLatency: ms(100, 200), OperatorCPU: 5, MachineCPU: 20, PeakRSS: 100 << 20, APIRequests: 1000}
	b := Run{Operator: "Kubeflow", N: 100, AllDrivers: 100 * time.Second, AllCompleted: 200 * time.Second,
		DriverLatency: ms(1000, 4000), OperatorCPU: 100, MachineCPU: 100, PeakRSS: 400 << 20}
	want := map[string]float64{
		"all drivers": 0.1, "all COMPLETED": 0.1, "apps/min": 10, "driver p50": 0.1, "driver p90": 0.05,
		"driver p99": 0.05, "operator CPU-s/app": 0.05, "machine CPU-s/app": 0.2, "peak operator RSS": 0.25,
	}
	got := Ratios(a, b)
	if len(got) != len(want)+1 {
		t.Fatalf("%d ratios, want %d: %+v", len(got), len(want)+1, got)
	}
	for _, r := range got {
		w, ok := want[r.Figure]
		switch {
		case r.Figure == "API requests/app":
			if !math.IsNaN(r.Value) {
				t.Errorf("API requests/app over zero = %v, want NaN", r.Value)
			}
		case !ok:
			t.Errorf("unexpected figure %q", r.Figure)
		case math.Abs(r.Value-w) > 1e-9:
			t.Errorf("%s: %v, want %v", r.Figure, r.Value, w)
		}
	}
	var line strings.Builder
	if err := WriteRatios(&line, a, b); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"sparkhooks ÷ Kubeflow at N = 100: ", "apps/min 10,", "operator CPU-s/app 0.05,", "API requests/app n/a\n"} {
		if !strings.Contains(line.String(), part) {
			t.Errorf("ratio line %q lacks %q", line.String(), part)
		}
	}
}

func TestWriteTable(t *testing.T) {
	var out strings.Builder
	runs := []Run{{Operator: "ceiling", N: 100, AllDrivers: 1500 * time.Millisecond, AllCompleted: 12 * time.Second,
		DriverLatency: ms(10, 20, 30), OperatorCPU: 2, MachineCPU: 30, PeakRSS: 50 << 20, APIRequests: 1234, Load: "1.00 0.50 0.25"}}
	if err := WriteTable(&out, runs); err != nil {
		t.Fatal(err)
	}
	want := "| operator | N | all drivers | all COMPLETED | apps/min | driver p50 | driver p90 | driver p99 | operator CPU-s/app | machine CPU-s/app | peak operator RSS | API requests/app | load at end |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
		"| ceiling | 100 | 1.5 s | 12.0 s | 500 | 20 ms | 30 ms | 30 ms | 0.020 | 0.300 | 50 MiB | 12.3 | 1.00 0.50 0.25 |\n"
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}
