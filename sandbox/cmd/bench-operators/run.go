package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/opbench"
)

// benchImage is the image every driver names; simulated pods never pull it.
const benchImage = "apache/spark:3.5.3"

// operator is one thing the benchmark runs applications through.
type operator struct {
	name string
	// namespace holds its applications, resource is their kind.
	namespace string
	resource  schema.GroupVersionResource
	// manifest is application i.
	manifest func(i int) *unstructured.Unstructured
	// finished says whether an application has ended, and whether it failed.
	finished func(app *unstructured.Unstructured) (done, failed bool)
	// processes are the operator's processes, whose CPU and memory the run counts.
	processes func() ([]int, error)
}

func sparkApplication(namespace string) func(int) *unstructured.Unstructured {
	return func(i int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "sparkoperator.k8s.io/v1beta2", "kind": "SparkApplication",
			"metadata": map[string]any{"name": fmt.Sprintf("app-%04d", i), "namespace": namespace},
			"spec": map[string]any{
				"type": "Scala", "mode": "cluster", "image": benchImage,
				"mainClass":           "org.apache.spark.examples.SparkPi",
				"mainApplicationFile": "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar",
				"sparkVersion":        "3.5.3",
				"restartPolicy":       map[string]any{"type": "Never"},
				"driver":              map[string]any{"cores": int64(1), "coreRequest": "10m", "memory": "64m", "serviceAccount": "spark"},
				"executor":            map[string]any{"instances": int64(1), "cores": int64(1), "coreRequest": "10m", "memory": "64m"},
			},
		}}
	}
}

func sparkApplicationFinished(app *unstructured.Unstructured) (bool, bool) {
	state, _, _ := unstructured.NestedString(app.Object, "status", "applicationState", "state")
	return state == "COMPLETED" || state == "FAILED", state == "FAILED"
}

func ceilingRun(namespace string) func(int) *unstructured.Unstructured {
	return func(i int) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": ceilingRuns.GroupVersion().String(), "kind": "CeilingRun",
			"metadata": map[string]any{"name": fmt.Sprintf("app-%04d", i), "namespace": namespace},
		}}
	}
}

func ceilingFinished(run *unstructured.Unstructured) (bool, bool) {
	phase, _, _ := unstructured.NestedString(run.Object, "status", "phase")
	return phase == string(corev1.PodSucceeded) || phase == string(corev1.PodFailed), phase == string(corev1.PodFailed)
}

// bench is what every run shares: the user's clients and how long a run may take.
type bench struct {
	dyn     dynamic.Interface
	core    kubernetes.Interface
	timeout time.Duration
}

// warmUp runs application 0 (not counted) to its end: the operator's controllers have started
// and its caches are filled before the clock starts.
func (b *bench) warmUp(ctx context.Context, op operator) error {
	deadline := time.Now().Add(3 * time.Minute)
	// An operator's webhooks may refuse it for a few seconds after their start.
	for {
		_, err := b.dyn.Resource(op.resource).Namespace(op.namespace).Create(ctx, op.manifest(0), metav1.CreateOptions{})
		if err == nil {
			break
		}
		if time.Now().After(deadline.Add(-150 * time.Second)) {
			return fmt.Errorf("%s: creating the warm-up application: %w", op.name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	for time.Now().Before(deadline) {
		app, err := b.dyn.Resource(op.resource).Namespace(op.namespace).Get(ctx, op.manifest(0).GetName(), metav1.GetOptions{})
		if err == nil {
			if done, failed := op.finished(app); done {
				if failed {
					return fmt.Errorf("%s: the warm-up application failed: %v", op.name, app.Object["status"])
				}
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: the warm-up application did not finish in 3 minutes", op.name)
}

// run creates applications 1..n at once and measures until all have finished.
func (b *bench) run(ctx context.Context, op operator, n int) (opbench.Run, error) {
	r := opbench.Run{Operator: op.name, N: n}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	apps := b.dyn.Resource(op.resource).Namespace(op.namespace)
	// Watches from now on, opened before the first create, see every driver and every end.
	pods := b.core.CoreV1().Pods(op.namespace)
	podWatch, err := resumingWatch(ctx, func(ctx context.Context) (string, error) {
		list, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return "", err
		}
		return list.ResourceVersion, nil
	}, pods.Watch)
	if err != nil {
		return r, fmt.Errorf("watching pods: %w", err)
	}
	defer podWatch.Stop()
	appWatch, err := resumingWatch(ctx, func(ctx context.Context) (string, error) {
		list, err := apps.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return "", err
		}
		return list.GetResourceVersion(), nil
	}, apps.Watch)
	if err != nil {
		return r, fmt.Errorf("watching applications: %w", err)
	}
	defer appWatch.Stop()

	pids, err := op.processes()
	if err != nil {
		return r, err
	}
	cpuBefore, err := processCPU(pids)
	if err != nil {
		return r, err
	}
	machineBefore, err := machineCPU()
	if err != nil {
		return r, err
	}
	requestsBefore, err := b.requestTotal(ctx)
	if err != nil {
		return r, err
	}
	peak := make(chan uint64, 1)
	sampling, stopSampling := context.WithCancel(ctx)
	go func() { peak <- samplePeakRSS(sampling, pids) }()

	created := make([]time.Time, n+1)
	start := time.Now()
	createErr := make(chan error, 1)
	go func() { createErr <- createAll(ctx, apps, op, n, created) }()

	driverSeen := map[string]time.Time{}
	finished := map[string]bool{}
	var lastDriver, lastFinished time.Time
	for len(finished) < n || len(driverSeen) < n {
		select {
		case <-ctx.Done():
			stopSampling()
			return r, fmt.Errorf("%s: %d of %d drivers and %d ended after %s: %w", op.name, len(driverSeen), n, len(finished), time.Since(start).Round(time.Second), ctx.Err())
		case err := <-createErr:
			if err != nil {
				stopSampling()
				return r, err
			}
			createErr = nil
		case ev, ok := <-podWatch.ResultChan():
			if !ok {
				stopSampling()
				return r, fmt.Errorf("%s: the pod watch ended", op.name)
			}
			pod, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			app, isDriver := strings.CutSuffix(pod.Name, "-driver")
			if !isDriver || app == op.manifest(0).GetName() {
				continue
			}
			if _, seen := driverSeen[app]; !seen && ev.Type != watch.Deleted {
				lastDriver = time.Now()
				driverSeen[app] = lastDriver
			}
		case ev, ok := <-appWatch.ResultChan():
			if !ok {
				stopSampling()
				return r, fmt.Errorf("%s: the application watch ended", op.name)
			}
			app, isApp := ev.Object.(*unstructured.Unstructured)
			if !isApp || app.GetName() == op.manifest(0).GetName() || finished[app.GetName()] {
				continue
			}
			if done, failed := op.finished(app); done {
				if failed {
					stopSampling()
					return r, fmt.Errorf("%s: %s failed: %v", op.name, app.GetName(), app.Object["status"])
				}
				lastFinished = time.Now()
				finished[app.GetName()] = true
			}
		}
	}
	stopSampling()
	r.PeakRSS = <-peak
	// Every create was answered (each has its driver), but the creating goroutines may not
	// have returned yet: created is read once they have.
	if createErr != nil {
		if err := <-createErr; err != nil {
			return r, err
		}
	}
	r.AllDrivers, r.AllCompleted = lastDriver.Sub(start), lastFinished.Sub(start)
	for i := 1; i <= n; i++ {
		name := op.manifest(i).GetName()
		r.DriverLatency = append(r.DriverLatency, driverSeen[name].Sub(created[i]))
	}
	cpuAfter, err := processCPU(pids)
	if err != nil {
		return r, err
	}
	machineAfter, err := machineCPU()
	if err != nil {
		return r, err
	}
	requestsAfter, err := b.requestTotal(ctx)
	if err != nil {
		return r, err
	}
	operatorCPU, byProcess := cpuSpent(cpuBefore, cpuAfter)
	fmt.Fprintf(os.Stderr, "bench-operators: %s, N = %d: CPU by process: %s\n", op.name, n, byProcess)
	r.OperatorCPU, r.MachineCPU, r.APIRequests = operatorCPU, machineAfter-machineBefore, requestsAfter-requestsBefore
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		r.Load = strings.Join(strings.Fields(string(load))[:3], " ")
	}
	return r, nil
}

// resumingWatch watches from the resource version now and resumes from the last event it
// delivered whenever the server ends the watch: kube-apiserver closes a watcher that falls
// behind, as the benchmark's may on a loaded machine during a thousand creates.
func resumingWatch(ctx context.Context, now func(context.Context) (string, error), watchFunc cache.WatchFuncWithContext) (watch.Interface, error) {
	rv, err := now(ctx)
	if err != nil {
		return nil, err
	}
	return watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: watchFunc})
}

// createAll creates applications 1..n from 32 clients at once, recording when each create was
// sent.
func createAll(ctx context.Context, apps dynamic.ResourceInterface, op operator, n int, created []time.Time) error {
	next := make(chan int)
	errs := make(chan error, n)
	var workers sync.WaitGroup
	for range 32 {
		workers.Go(func() {
			for i := range next {
				created[i] = time.Now()
				if _, err := apps.Create(ctx, op.manifest(i), metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("%s: creating application %d: %w", op.name, i, err)
				}
			}
		})
	}
	for i := 1; i <= n; i++ {
		next <- i
	}
	close(next)
	workers.Wait()
	close(errs)
	return <-errs
}

// cleanUp deletes the operator's applications and waits for their Pods to go, so that the next
// run starts on an API server holding what it held before this one.
func (b *bench) cleanUp(ctx context.Context, op operator) error {
	if err := b.dyn.Resource(op.resource).Namespace(op.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return fmt.Errorf("%s: deleting the applications: %w", op.name, err)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		pods, err := b.core.CoreV1().Pods(op.namespace).List(ctx, metav1.ListOptions{})
		if err == nil && len(pods.Items) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("%s: the applications' Pods are still there after 10 minutes", op.name)
}

// requestTotal is how many requests kube-apiserver has answered since it started.
func (b *bench) requestTotal(ctx context.Context) (float64, error) {
	body, err := b.core.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading kube-apiserver's metrics: %w", err)
	}
	return opbench.ParseRequestTotal(body)
}

// childrenRunning lists this process's children whose executable is one of binaries, and
// wants count of them.
func childrenRunning(count int, binaries ...string) ([]int, error) {
	parents, err := processParents()
	if err != nil {
		return nil, err
	}
	var pids []int
	for pid, ppid := range parents {
		if ppid != os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		if slices.Contains(binaries, argv0) {
			pids = append(pids, pid)
		}
	}
	if len(pids) != count {
		return nil, fmt.Errorf("found %d processes of %v among this process's children, want %d", len(pids), binaries, count)
	}
	return pids, nil
}

// processParents maps every process of the machine to its parent.
func processParents() (map[int]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	parents := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if stat, err := readStat(pid); err == nil {
			parents[pid] = stat.PPID
		}
	}
	return parents, nil
}

func readStat(pid int) (opbench.ProcStat, error) {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return opbench.ProcStat{}, err
	}
	return opbench.ParseProcStat(stat)
}

// processCPU is the CPU-seconds each of pids has used, with the children it waited for.
func processCPU(pids []int) (map[int]float64, error) {
	out := make(map[int]float64, len(pids))
	for _, pid := range pids {
		stat, err := readStat(pid)
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", pid, err)
		}
		out[pid] = stat.CPU
	}
	return out, nil
}

// cpuSpent is the CPU-seconds the processes used between two processCPU readings, in all and
// by process name ("metacontroller 58.1 s, sparkhooks 12.0 s"): the figures do not say which of
// an operator's processes costs what.
func cpuSpent(before, after map[int]float64) (total float64, byProcess string) {
	var parts []string
	for _, pid := range slices.Sorted(maps.Keys(after)) {
		spent := after[pid] - before[pid]
		total += spent
		name, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm"))
		if err != nil {
			name = []byte(strconv.Itoa(pid))
		}
		parts = append(parts, fmt.Sprintf("%s %.1f s", strings.TrimSpace(string(name)), spent))
	}
	return total, strings.Join(parts, ", ")
}

func machineCPU() (float64, error) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return opbench.ParseMachineCPU(stat)
}

// samplePeakRSS samples the summed resident memory of the processes and everything they run
// (Kubeflow's spark-submit JVMs) every 500 ms until ctx ends.
func samplePeakRSS(ctx context.Context, roots []int) uint64 {
	var peak uint64
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if parents, err := processParents(); err == nil {
			var sum uint64
			for _, pid := range opbench.Descendants(parents, roots) {
				status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
				if err != nil {
					continue
				}
				if rss, err := opbench.ParseRSS(status); err == nil {
					sum += rss
				}
			}
			peak = max(peak, sum)
		}
		select {
		case <-ctx.Done():
			return peak
		case <-tick.C:
		}
	}
}
