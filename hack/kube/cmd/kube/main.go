// Command kube is kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy
// in one executable, chosen by the name it is run as (build.sh links each name to it). One binary
// instead of five: one link on a fresh machine instead of five, and the processes of the sandbox
// share its code pages in memory instead of each mapping a copy of the same packages.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"

	// CronJob time zones, as the upstream kube-apiserver and kube-controller-manager embed them.
	_ "time/tzdata"
)

var commands = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
	"kube-proxy":              proxy.NewProxyCommand,
}

func main() {
	name := filepath.Base(os.Args[0])
	newCommand, ok := commands[name]
	if !ok {
		names := make([]string, 0, len(commands))
		for n := range commands {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "kube: run me as one of %s (a link named so), not as %q\n", strings.Join(names, ", "), name)
		os.Exit(2)
	}
	os.Exit(cli.Run(newCommand()))
}
