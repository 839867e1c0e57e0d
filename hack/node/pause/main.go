// Command pause is the real node's sandbox image: the first process of every pod, which holds the
// pod's namespaces while its containers come and go. It does what the upstream pause does and no
// more: sleep until SIGINT or SIGTERM, and reap the orphans it inherits as PID 1 of a pod that
// shares its process namespace.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every child that has exited; one SIGCHLD may stand for several.
func reap() {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
