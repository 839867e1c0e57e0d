package sparkapp

import "testing"

func TestHistoryURL(t *testing.T) {
	for _, tc := range []struct {
		name, base      string
		defaultEventLog bool
		appID, want     string
	}{
		{"logs to the default dir", "http://history.example.com", true, "spark-0123", "http://history.example.com/history/spark-0123/jobs/"},
		{"base with a path and a slash", "https://example.com/spark-history/", true, "spark-0123", "https://example.com/spark-history/history/spark-0123/jobs/"},
		{"logs elsewhere", "http://history.example.com", false, "spark-0123", ""},
		{"no History Server", "", true, "spark-0123", ""},
		{"no application id", "http://history.example.com", true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := historyURL(tc.base, tc.defaultEventLog, tc.appID); got != tc.want {
				t.Errorf("historyURL(%q, %v, %q) = %q, want %q", tc.base, tc.defaultEventLog, tc.appID, got, tc.want)
			}
		})
	}
}
