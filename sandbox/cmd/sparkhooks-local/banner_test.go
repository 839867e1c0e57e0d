package main

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestCPUHint(t *testing.T) {
	for _, tc := range []struct {
		cpus string
		warn bool
	}{
		{"2", true},
		{"2500m", true},
		{"3", false},
		{"16", false},
	} {
		hint := cpuHint(resource.MustParse(tc.cpus))
		if got := strings.Contains(hint, "coreRequest"); got != tc.warn {
			t.Errorf("%s CPUs: hint %q, want a warning: %v", tc.cpus, hint, tc.warn)
		}
	}
}
