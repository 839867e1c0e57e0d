// Package klogsink keeps what client-go and the embedded etcd log through klog out of test output.
package klogsink

import (
	"flag"
	"io"

	"k8s.io/klog/v2"
)

// Redirect sends what client-go and the embedded etcd's libraries log through klog to w
// instead of the test output. klog is process-wide: call this once, from TestMain.
func Redirect(w io.Writer) {
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	for name, value := range map[string]string{
		"logtostderr":     "false",
		"alsologtostderr": "false",
		"stderrthreshold": "FATAL",
		"one_output":      "true",
	} {
		_ = flags.Set(name, value)
	}
	klog.SetOutput(w)
}
