//go:build e2e

package local

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

// TestHookServerPodIsRestarted is the first check, with real Spark: the hook server's
// Pod process is killed (SIGKILL) while SparkPi runs; the kubelet restarts it as a kubelet does,
// the terminal says so, and SparkPi completes with the same driver Pod. Killed again, it goes into
// CrashLoopBackOff, which the terminal says with the end of its last run, and comes back: the
// sandbox keeps running as a cluster does. Then SIGHUP (the terminal closed), and nothing is left.
func TestHookServerPodIsRestarted(t *testing.T) {
	requireRealSpark(t)
	sandbox, hooks := build(t)
	s := start(t, sandbox, realArgs(hooks)...)
	t.Logf("up after %s", s.upAfter.Round(100*time.Millisecond))
	if out, err := s.kubectl("apply", "-f", "examples/spark-pi.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	driverUID := s.waitForJSONPath(t, 2*time.Minute, "pod/spark-pi-driver", "{.metadata.uid}")

	pod, pid := s.hookServerPod(t, 0)
	killedAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	restarted := fmt.Sprintf("container sparkhooks of Pod sparkhooks/%s exited (signal: killed); the kubelet restarted it (restart 1)", pod)
	s.waitForOutput(t, time.Minute, restarted)
	t.Logf("the terminal said it %s after the kill", time.Since(killedAt).Round(100*time.Millisecond))

	s.waitForState(t, 4*time.Minute, "spark-pi", "COMPLETED")
	if uid, _ := s.kubectl("get", "pod", "spark-pi-driver", "-o", "jsonpath={.metadata.uid}"); uid != driverUID {
		t.Errorf("the driver Pod is %q after the restart, want the same one, %q", uid, driverUID)
	}
	if logs, err := s.kubectl("logs", "spark-pi-driver"); err != nil || !strings.Contains(logs, "Pi is roughly 3.1") {
		t.Errorf("kubectl logs spark-pi-driver: %v: no Pi line in\n%s", err, harness.Tail(logs, 20))
	}

	// The second exit within the kubelet's back-off reset is backed off from, as in a cluster.
	_, pid = s.hookServerPod(t, 1)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitForOutput(t, time.Minute, fmt.Sprintf("container sparkhooks of Pod sparkhooks/%s keeps failing: CrashLoopBackOff, back-off 10s", pod))
	s.waitForOutput(t, time.Second, "the end of its last run:\n    ")
	s.hookServerPod(t, 2)
	if len(s.exited) > 0 {
		t.Fatalf("the sandbox stopped on a crash-looping Pod:\n%s", s.output)
	}
	t.Logf("terminal:\n%s", s.output)
	left := s.whatItMade(t)
	s.stopWith(syscall.SIGHUP)
	s.checkNothingIsLeft(t)
	left.check(t)
}

// TestNothingIsLeft: the sandbox cleans up after itself with its stdout closed under it (the
// reader of its pipe gone, as with make run | tee when tee exits first), and its reaper cleans up
// after it when it is killed (SIGKILL, which no process can catch, stands for every death that
// runs no clean-up: a panic in any goroutine, a fatal runtime error). Either way no process,
// network namespace, bridge, nft table, mount or data directory is left.
func TestNothingIsLeft(t *testing.T) {
	requireRealSpark(t)
	sandbox, hooks := build(t)

	t.Run("stdout closed, then SIGINT", func(t *testing.T) {
		s, firstLine := startPiped(t, sandbox, realArgs(hooks)...)
		if !strings.HasPrefix(firstLine, "sparkhooks-local is up") {
			t.Errorf("the reader got %q, want the banner's first line", firstLine)
		}
		left := s.whatItMade(t)
		// A line for the closed stdout: the hook server's restart.
		_, pid := s.hookServerPod(t, 0)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		s.hookServerPod(t, 1)
		if len(s.exited) > 0 {
			t.Fatalf("the sandbox died writing to its closed stdout: %v", <-s.exited)
		}
		s.stopWith(syscall.SIGINT)
		s.checkNothingIsLeft(t)
		left.check(t)
	})

	t.Run("SIGKILL", func(t *testing.T) {
		s := start(t, sandbox, realArgs(hooks)...)
		if out, err := s.kubectl("apply", "-f", "examples/spark-pi.yaml"); err != nil {
			t.Fatalf("kubectl apply: %v\n%s", err, out)
		}
		s.waitForJSONPath(t, 2*time.Minute, "pod/spark-pi-driver", "{.status.podIP}")
		left := s.whatItMade(t)
		tree := descendants(s.cmd.Process.Pid)
		if err := s.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-s.exited
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) && (left.remaining() != "" || anyAlive(tree)) {
			time.Sleep(200 * time.Millisecond)
		}
		left.check(t)
		said := s.stderr.String()
		if !strings.Contains(said, "sparkhooks-local ended without cleaning up; its reaper removed ") || !strings.Contains(said, "the pod network "+left.bridge+", "+left.dataDir+"\n") {
			t.Errorf("stderr does not say what the reaper removed:\n%s", s.stderr)
		}
		for _, pid := range tree {
			if alive(pid) {
				t.Errorf("process %d (%s) outlived the sandbox", pid, commandOf(pid))
			}
		}
	})
}

// TestSimulatedPartsAreRestarted: on the simulated node the sandbox restarts what it runs itself.
// Killed once, kube-apiserver comes back on its port and kubectl works again; the hook server's
// host process killed five times in a row is restarted four times, with back-off, and the fifth
// exit stops the sandbox, cleanly, with the reason and the end of the server's log.
func TestSimulatedPartsAreRestarted(t *testing.T) {
	kubeBinDir, helm := os.Getenv("KUBE_BIN_DIR"), os.Getenv("HELM")
	if kubeBinDir == "" || helm == "" {
		t.Fatal("KUBE_BIN_DIR and HELM are not set: make e2e sets them from make kube and make helm")
	}
	sandbox, hooks := build(t)
	s := start(t, sandbox, "--simulate", "--api-addr", "127.0.0.1:0", "--sparkhooks", hooks, "--images", t.TempDir())
	stopped := false
	defer func() {
		if !stopped {
			s.stopWith(syscall.SIGINT)
		}
	}()
	dataDir := filepath.Dir(s.kubeconfig)
	tree := descendants(s.cmd.Process.Pid)

	apiserver := s.child(t, "kube-apiserver", 0)
	if err := syscall.Kill(apiserver, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.waitForOutput(t, 10*time.Second, "kube-apiserver exited (signal: killed); restarted in 1s")
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := s.kubectl("get", "namespace", "sparkhooks", "-o", "name")
		if err == nil && strings.TrimSpace(out) == "namespace/sparkhooks" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl after kube-apiserver's restart: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}

	killed := 0
	for pid := 0; killed < 5; killed++ {
		pid = s.child(t, " serve ", pid)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if killed < 4 {
			s.waitForOutput(t, 10*time.Second, fmt.Sprintf("sparkhooks serve exited (signal: killed); restarted in %ds", 1<<killed))
		}
	}
	var err error
	select {
	case err = <-s.exited:
		stopped = true
	case <-time.After(time.Minute):
		t.Fatalf("the sandbox did not stop within a minute of the fifth exit:\n%s", s.output)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("the sandbox exited with %v, want exit status 1", err)
	}
	const reason = "sparkhooks serve exited (signal: killed), 5 times within 1m0s: not restarted"
	if !strings.Contains(s.output.String(), "sparkhooks-local: stopping: "+reason) {
		t.Errorf("the terminal does not say why it stops:\n%s", s.output)
	}
	if !strings.Contains(s.stderr.String(), reason+"\nthe end of its log, ") || !strings.Contains(s.stderr.String(), `"msg":"listening"`) {
		t.Errorf("stderr does not give the reason and the end of the server's log:\n%s", s.stderr.String())
	}
	t.Logf("stderr:\n%s", s.stderr.String())
	for _, pid := range tree {
		if alive(pid) {
			t.Errorf("process %d (%s) outlived the sandbox", pid, commandOf(pid))
		}
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("the data dir %s is still there: %v", dataDir, err)
	}
}

func requireRealSpark(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the sandbox runs pods in namespaces: this test needs root")
	}
	if _, err := os.Stat(filepath.Join(imagesDir(), "images.json")); err != nil {
		t.Fatalf("no Spark images (make spark-images): %v", err)
	}
}

// realArgs run the sandbox as make run does: under Metacontroller when the team has it.
func realArgs(hooks string) []string {
	return []string{"--api-addr", "127.0.0.1:0", "--sparkhooks", hooks, "--images", imagesDir(), "--metacontroller", os.Getenv("METACONTROLLER_BIN")}
}

// startPiped starts the sandbox with its stdout piped into a reader that exits after the first
// line, and returns that line once the sandbox is up.
func startPiped(t *testing.T, binary string, args ...string) (*started, string) {
	t.Helper()
	readyFile := filepath.Join(t.TempDir(), "ready")
	read, write, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	head := exec.Command("head", "-n", "1")
	head.Stdin = read
	var first harness.LockedBuffer
	head.Stdout = &first
	if err := head.Start(); err != nil {
		t.Fatal(err)
	}
	read.Close()
	cmd := exec.Command(binary, append(args, "--ready-file", readyFile)...)
	cmd.Stdout = write
	s := &started{cmd: cmd, output: &harness.LockedBuffer{}, stderr: &harness.LockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	write.Close()
	go func() { s.exited <- cmd.Wait() }()
	select {
	case s.kubeconfig = <-waitForFile(readyFile, s.exited):
	case err := <-s.exited:
		t.Fatalf("sparkhooks-local exited before it was up: %v\n%s", err, s.stderr)
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("sparkhooks-local was not up within 2 minutes:\n%s", s.stderr)
	}
	if err := head.Wait(); err != nil {
		t.Fatalf("head: %v", err)
	}
	return s, strings.TrimSpace(first.String())
}

func (s *started) waitForOutput(t *testing.T, timeout time.Duration, want string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(s.output.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal did not say %q within %s:\n%s", want, timeout, s.output)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitForJSONPath waits until the object has a value at path and returns it.
func (s *started) waitForJSONPath(t *testing.T, timeout time.Duration, object, path string) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := s.kubectl("get", object, "-o", "jsonpath="+path)
		if err == nil && out != "" {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no %s after %s: %v %s", object, path, timeout, err, out)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (s *started) waitForState(t *testing.T, timeout time.Duration, app, want string) {
	t.Helper()
	state := ""
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline) && state != want; {
		time.Sleep(time.Second)
		state, _ = s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", app, "-o", "jsonpath={.status.applicationState.state}")
	}
	if state != want {
		out, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", app, "-o", "yaml")
		t.Fatalf("%s is %q, want %s:\n%s", app, state, want, out)
	}
}

// hookServerPod waits until the hook server's Pod runs its container after restarts restarts and
// returns the Pod's name and the container's process.
func (s *started) hookServerPod(t *testing.T, restarts int) (string, int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var out string
	for time.Now().Before(deadline) {
		out, _ = s.kubectl("get", "pods", "-n", "sparkhooks", "-l", "app.kubernetes.io/name=sparkhooks",
			"-o", `jsonpath={range .items[*]}{.metadata.name} {.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].state.running.startedAt} {.status.containerStatuses[0].containerID}{"\n"}{end}`)
		for _, line := range strings.Split(out, "\n") {
			fields := strings.Fields(line)
			if len(fields) != 4 || fields[1] != strconv.Itoa(restarts) {
				continue
			}
			if pid, err := strconv.Atoi(strings.TrimPrefix(fields[3], "process://")); err == nil && alive(pid) {
				return fields[0], pid
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no hook server Pod running after %d restarts:\n%s\nterminal:\n%s", restarts, out, s.output)
	return "", 0
}

// child waits for a process of the sandbox whose command line holds what, other than not, and
// returns it.
func (s *started) child(t *testing.T, what string, not int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, pid := range descendants(s.cmd.Process.Pid) {
			if pid != not && alive(pid) && strings.Contains(commandOf(pid), what) {
				return pid
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no process of the sandbox runs %q:\n%s", what, s.output)
	return 0
}

// stopWith sends sig and waits for the sandbox to exit, successfully.
func (s *started) stopWith(sig syscall.Signal) {
	_ = s.cmd.Process.Signal(sig)
	select {
	case err := <-s.exited:
		s.exited <- err
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
	}
}

// checkNothingIsLeft checks that the stopped sandbox exited successfully and left no process.
func (s *started) checkNothingIsLeft(t *testing.T) {
	t.Helper()
	if err := <-s.exited; err != nil {
		t.Errorf("sparkhooks-local exited with %v:\n%s%s", err, s.output, s.stderr)
	}
	s.exited <- nil
}

// leftovers are what a running real-mode sandbox made on the machine, which must go with it.
type leftovers struct {
	dataDir, bridge string
	netns           []string
	processes       []int
}

// whatItMade finds them: the data dir holds the kubeconfig, the bridge holds the node's address,
// the pods' network namespaces are named after their veths on the bridge.
func (s *started) whatItMade(t *testing.T) *leftovers {
	t.Helper()
	l := &leftovers{dataDir: filepath.Dir(s.kubeconfig), processes: descendants(s.cmd.Process.Pid)}
	nodeIP, err := s.kubectl("get", "node", "sparkhooks-local", "-o", `jsonpath={.status.addresses[?(@.type=="InternalIP")].address}`)
	if err != nil {
		t.Fatalf("the node's address: %v %s", err, nodeIP)
	}
	addrs, _ := exec.Command("ip", "-o", "-4", "addr", "show").Output()
	for _, line := range strings.Split(string(addrs), "\n") {
		if fields := strings.Fields(line); len(fields) > 3 && strings.HasPrefix(fields[3], nodeIP+"/") {
			l.bridge = fields[1]
		}
	}
	if l.bridge == "" {
		t.Fatalf("no bridge holds the node's address %s:\n%s", nodeIP, addrs)
	}
	links, _ := exec.Command("ip", "-o", "link", "show", "master", l.bridge).Output()
	for _, line := range strings.Split(string(links), "\n") {
		if fields := strings.Fields(line); len(fields) > 1 {
			name, _, _ := strings.Cut(strings.TrimSuffix(fields[1], ":"), "@")
			if id, ok := strings.CutPrefix(name, "skv"); ok {
				l.netns = append(l.netns, "skp-"+id)
			}
		}
	}
	if len(l.netns) == 0 {
		t.Fatalf("no pod's veth on %s:\n%s", l.bridge, links)
	}
	return l
}

// remaining says which of them are still there.
func (l *leftovers) remaining() string {
	var out []string
	if _, err := os.Stat(l.dataDir); err == nil {
		out = append(out, "data dir "+l.dataDir)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), " "+l.dataDir+"/") {
		out = append(out, "mounts below "+l.dataDir)
	}
	if _, err := os.Stat("/sys/class/net/" + l.bridge); err == nil {
		out = append(out, "bridge "+l.bridge)
	}
	if err := exec.Command("nft", "list", "table", "ip", l.bridge).Run(); err == nil {
		out = append(out, "nft table "+l.bridge)
	}
	for _, ns := range l.netns {
		if _, err := os.Stat("/run/netns/" + ns); err == nil {
			out = append(out, "network namespace "+ns)
		}
	}
	return strings.Join(out, ", ")
}

func (l *leftovers) check(t *testing.T) {
	t.Helper()
	if left := l.remaining(); left != "" {
		t.Errorf("left behind: %s", left)
	}
	for _, pid := range l.processes {
		if alive(pid) {
			t.Errorf("process %d (%s) outlived the sandbox", pid, commandOf(pid))
		}
	}
}

func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if alive(pid) {
			return true
		}
	}
	return false
}
