//go:build e2e

// Package local runs the sandbox `make run` starts (sandbox/cmd/sparkhooks-local) as a user would: from
// the repository root, kubectl against the kubeconfig it prints, examples/spark-pi.yaml run by
// real Spark, then Ctrl-C, after which nothing it started may be left.
package local

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

const repoRoot = "../../.."

// build compiles the two binaries `make run` builds, in a directory any user may read.
func build(t *testing.T) (sandbox, hooks string) {
	t.Helper()
	dir := sharedTempDir(t)
	for _, b := range []struct{ module, name string }{{".", "sparkhooks"}, {"sandbox", "sparkhooks-local"}} {
		out, err := exec.Command("go", "build", "-C", b.module, "-o", filepath.Join(dir, b.name), "./cmd/"+b.name).CombinedOutput()
		if err != nil {
			t.Fatalf("building %s: %v\n%s", b.name, err, out)
		}
	}
	return filepath.Join(dir, "sparkhooks-local"), filepath.Join(dir, "sparkhooks")
}

func init() {
	// go test runs in the package directory; the sandbox's defaults are relative to the root.
	if err := os.Chdir(repoRoot); err != nil {
		panic(err)
	}
}

func imagesDir() string {
	if dir := os.Getenv("SPARK_IMAGES_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(".cache", "spark-images")
}

// started is a running sandbox and what it printed.
type started struct {
	cmd        *exec.Cmd
	kubeconfig string
	upAfter    time.Duration
	output     *harness.LockedBuffer
	stderr     *harness.LockedBuffer
	exited     chan error
}

func start(t *testing.T, binary string, args ...string) *started {
	t.Helper()
	return startAs(t, nil, binary, args...)
}

// startAs starts the sandbox as user (nil: as this process), in user's environment.
func startAs(t *testing.T, user *unprivileged, binary string, args ...string) *started {
	t.Helper()
	readyDir := t.TempDir()
	if user != nil {
		readyDir = sharedTempDir(t)
		user.own(t, readyDir)
	}
	readyFile := filepath.Join(readyDir, "ready")
	cmd := exec.Command(binary, append(args, "--ready-file", readyFile)...)
	if user != nil {
		cmd.Env, cmd.SysProcAttr = user.env, &syscall.SysProcAttr{Credential: &user.credential}
	}
	return launch(t, cmd, readyFile)
}

// launch starts the sandbox cmd and waits for it to write readyFile.
func launch(t *testing.T, cmd *exec.Cmd, readyFile string) *started {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &harness.LockedBuffer{}
	cmd.Stderr = stderr
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &started{cmd: cmd, output: &harness.LockedBuffer{}, stderr: stderr, exited: make(chan error, 1)}
	ready := waitForFile(readyFile, s.exited)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			line := scanner.Text()
			_, _ = s.output.Write([]byte(line + "\n"))
		}
		s.exited <- cmd.Wait()
	}()
	select {
	case s.kubeconfig = <-ready:
		s.upAfter = time.Since(begin)
	case err := <-s.exited:
		t.Fatalf("sparkhooks-local exited before it was up: %v\n%s%s", err, s.output, stderr.String())
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("sparkhooks-local printed no kubeconfig within 2 minutes:\n%s%s", s.output, stderr.String())
	}
	return s
}

// waitForFile sends the content of path (the kubeconfig's path, which the sandbox writes there
// once it is up) when the file appears, until exited is closed or written.
func waitForFile(path string, exited chan error) <-chan string {
	ready := make(chan string, 1)
	go func() {
		for {
			if data, err := os.ReadFile(path); err == nil {
				ready <- strings.TrimSpace(string(data))
				return
			}
			if len(exited) > 0 {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return ready
}

func (s *started) kubectl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", s.kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// TestMakeRunRunsSparkPi is the acceptance run: up on the real control plane with the
// chart installed by Helm, kubectl's tables from the API server, an invalid application refused
// at apply by the validating webhook, SparkPi to COMPLETED with the Pi line in kubectl logs, then
// SIGINT and nothing left. With METACONTROLLER_BIN it runs twice: under Metacontroller and under
// the stand-in, the sandbox's two wirings.
func TestMakeRunRunsSparkPi(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the sandbox runs pods in namespaces: this test needs root")
	}
	if _, err := os.Stat(filepath.Join(imagesDir(), "images.json")); err != nil {
		t.Fatalf("no Spark images (make spark-images): %v", err)
	}
	sandbox, hooks := build(t)
	controllers := map[string]string{"stand-in": "the local stand-in for Metacontroller"}
	if bin := os.Getenv("METACONTROLLER_BIN"); bin != "" {
		controllers[bin] = "Metacontroller v"
	}
	// Both serve Apache's kind too (make run APACHE=1); Apache's examples run in one of them,
	// under Metacontroller where there is one, to keep the suite short.
	apacheRelease := os.Getenv("APACHE_SPARK_OPERATOR")
	for metacontroller, controller := range controllers {
		t.Run(controller, func(t *testing.T) {
			if metacontroller == "stand-in" {
				metacontroller = ""
			}
			apache := ""
			if metacontroller != "" || len(controllers) == 1 {
				apache = apacheRelease
			}
			runSparkPi(t, sandbox, controller, apache, "--api-addr", "127.0.0.1:0", "--sparkhooks", hooks, "--images", imagesDir(), "--metacontroller", metacontroller, "--apache-spark-application")
		})
	}
}

// runSparkPi starts the sandbox with args and checks that its banner names controller; with
// apacheRelease (an Apache Spark Kubernetes Operator source tree), Apache's examples run too.
func runSparkPi(t *testing.T, sandbox, controller, apacheRelease string, args ...string) {
	s := start(t, sandbox, args...)
	t.Logf("up after %s:\n%s", s.upAfter.Round(100*time.Millisecond), s.output)
	for _, want := range []string{"Kubernetes v1.", "Installed with Helm", "run by " + controller} {
		if !strings.Contains(s.output.String(), want) {
			t.Fatalf("the banner does not say %q:\n%s", want, s.output)
		}
	}
	tree := descendants(s.cmd.Process.Pid)
	t.Logf("idle: %d processes, %d MiB resident", len(tree)+1, residentMiB(append(tree, s.cmd.Process.Pid)))
	subnet := field(s.output.String(), "on the pod network ")

	out, err := s.kubectl("get", "pods", "--all-namespaces")
	if err != nil || !strings.Contains(out, "READY") || !strings.Contains(out, "RESTARTS") || !strings.Contains(out, "Running") {
		t.Errorf("kubectl get pods -A prints no pod table: %v\n%s", err, out)
	}
	s.checkInvalidIsRefused(t)

	if out, err := s.kubectl("apply", "-f", "examples/spark-pi.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	deadline := time.Now().Add(4 * time.Minute)
	state := ""
	for time.Now().Before(deadline) && state != "COMPLETED" && state != "FAILED" {
		time.Sleep(time.Second)
		state, _ = s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "jsonpath={.status.applicationState.state}")
	}
	if state != "COMPLETED" {
		out, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "yaml")
		t.Fatalf("spark-pi is %q, want COMPLETED:\n%s", state, out)
	}
	logs, err := s.kubectl("logs", "spark-pi-driver")
	if err != nil || !strings.Contains(logs, "Pi is roughly 3.1") {
		t.Fatalf("kubectl logs spark-pi-driver: %v: no Pi line in\n%s", err, harness.Tail(logs, 20))
	}
	s.checkHistory(t, "spark-pi")
	if apacheRelease != "" {
		s.checkApacheExamples(t, apacheRelease)
	}

	s.stopAndCheckNothingIsLeft(t)
	if routes, _ := exec.Command("ip", "-4", "route").Output(); subnet != "" && strings.Contains(string(routes), subnet) {
		t.Errorf("the pod network %s is still routed:\n%s", subnet, routes)
	}
}

// listedApplication is an application as the History Server's /api/v1/applications lists it,
// by id.
type listedApplication struct {
	ID string `json:"id"`
}

// checkHistory waits for the sandbox's History Server and finds the completed application in its
// listing, through the API server's proxy to its Service, and its page in the status.
func (s *started) checkHistory(t *testing.T, app string) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); !strings.Contains(s.output.String(), "The History Server is ready"); time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox did not say its History Server is ready within 3 minutes:\n%s", s.output)
		}
	}
	for _, line := range strings.Split(s.output.String(), "\n") {
		if strings.Contains(line, "The History Server is ready") {
			t.Log(line)
		}
	}
	id, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", app, "-o", "jsonpath={.status.sparkApplicationId}")
	page, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", app, "-o", "jsonpath={.status.historyURL}")
	if want := "http://sparkhooks-history.sparkhooks.svc:18080/history/" + id + "/jobs/"; id == "" || page != want {
		t.Errorf("%s: status.historyURL %q, want %q", app, page, want)
	}
	listing := ""
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		listing, _ = s.kubectl("get", "--raw", "/api/v1/namespaces/sparkhooks/services/http:sparkhooks-history:18080/proxy/api/v1/applications")
		var apps []listedApplication
		if json.Unmarshal([]byte(listing), &apps) == nil && slices.Contains(apps, listedApplication{ID: id}) {
			t.Logf("the History Server lists %s (%s)", app, id)
			return
		}
	}
	t.Errorf("the History Server does not list %s (%s): %s", app, id, listing)
}

// checkInvalidIsRefused applies an application the validating webhook refuses.
func (s *started) checkInvalidIsRefused(t *testing.T) {
	t.Helper()
	invalid := filepath.Join(t.TempDir(), "invalid.yaml")
	example, err := os.ReadFile("examples/spark-pi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A size Spark cannot read: the CRD's schema accepts any string, the webhook does not.
	manifest := strings.ReplaceAll(strings.Replace(string(example), "name: spark-pi\n", "name: invalid-pi\n", 1), "memory: 512m\n", "memory: 512Mi\n")
	if err := os.WriteFile(invalid, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := s.kubectl("apply", "-f", invalid); err == nil || !strings.Contains(out, "spec.driver.memory") {
		t.Errorf("kubectl apply of an invalid application: %v, want it refused naming spec.driver.memory:\n%s", err, out)
	}
}

// stopAndCheckNothingIsLeft sends SIGINT, as Ctrl-C does, and checks that the sandbox stops and
// leaves no process and no listener of its API server behind.
func (s *started) stopAndCheckNothingIsLeft(t *testing.T) {
	t.Helper()
	apiAddr := field(s.output.String(), "kube-apiserver (https://")
	tree := descendants(s.cmd.Process.Pid)
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.exited:
		if err != nil {
			t.Errorf("sparkhooks-local exited with %v after SIGINT:\n%s", err, s.output)
		}
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		t.Fatalf("sparkhooks-local did not stop within a minute of SIGINT")
	}
	for _, pid := range tree {
		if alive(pid) {
			t.Errorf("process %d (%s) outlived the sandbox", pid, commandOf(pid))
		}
	}
	if l, err := net.Listen("tcp", apiAddr); err != nil {
		t.Errorf("the API server's address %s is still taken: %v", apiAddr, err)
	} else {
		l.Close()
	}
}

// TestSimulatedMode: without images (here: --simulate) the sandbox says it simulates and runs,
// without root, on the same real control plane with the chart installed by Helm: kubectl's
// tables, an invalid application refused by the validating webhook, which kube-apiserver reaches
// through the chart's Service at the hook server's host process, SparkPi's phases played to
// COMPLETED through the real hooks, kubectl logs through the simulated kubelet's API saying
// nothing ran, then SIGINT and nothing left. Run as root, the test runs the sandbox as nobody.
// With METACONTROLLER_BIN it runs twice: under the stand-in and under Metacontroller, a process
// of this machine calling the hooks at the hook server's host address.
func TestSimulatedMode(t *testing.T) {
	kubeBinDir, helm := os.Getenv("KUBE_BIN_DIR"), os.Getenv("HELM")
	if kubeBinDir == "" || helm == "" {
		t.Fatal("KUBE_BIN_DIR and HELM are not set: make e2e sets them from make kube and make helm")
	}
	sandbox, hooks := build(t)
	var user *unprivileged
	if os.Geteuid() == 0 {
		user = nobody(t)
		kubeBinDir = readableCopy(t, kubeBinDir, "kube-apiserver", "kube-controller-manager", "kube-scheduler")
		helm = filepath.Join(readableCopy(t, filepath.Dir(helm), filepath.Base(helm)), filepath.Base(helm))
	}
	controllers := map[string]string{"": "the local stand-in for Metacontroller"}
	if bin := os.Getenv("METACONTROLLER_BIN"); bin != "" {
		controllers[bin] = "Metacontroller v"
	}
	for metacontroller, controller := range controllers {
		t.Run(controller, func(t *testing.T) {
			runSimulated(t, user, sandbox, controller, "--simulate", "--api-addr", "127.0.0.1:0", "--sparkhooks", hooks, "--images", t.TempDir(),
				"--kube-bin-dir", kubeBinDir, "--helm", helm, "--metacontroller", metacontroller)
		})
	}
}

// runSimulated starts the simulated sandbox as user with args and checks that its banner names
// controller.
func runSimulated(t *testing.T, user *unprivileged, sandbox, controller string, args ...string) {
	s := startAs(t, user, sandbox, args...)
	stopped := false
	defer func() {
		if !stopped {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			<-s.exited
		}
	}()
	tree := append(descendants(s.cmd.Process.Pid), s.cmd.Process.Pid)
	t.Logf("up after %s, %d processes, %d MiB resident:\n%s", s.upAfter.Round(100*time.Millisecond), len(tree), residentMiB(tree), s.output)
	for _, want := range []string{"Mode: SIMULATED", "Kubernetes v1.", "the simulated kubelet", "Installed with Helm", "run by " + controller} {
		if !strings.Contains(s.output.String(), want) {
			t.Fatalf("the banner does not say %q:\n%s", want, s.output)
		}
	}
	for _, pid := range tree {
		if uid := uidOf(pid); user != nil && uid != int(user.credential.Uid) {
			t.Errorf("process %d (%s) runs as uid %d, not as the unprivileged user", pid, commandOf(pid), uid)
		}
	}
	s.checkInvalidIsRefused(t)
	if out, err := s.kubectl("apply", "-f", "examples/spark-pi.yaml"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	state := ""
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && state != "COMPLETED"; {
		time.Sleep(500 * time.Millisecond)
		state, _ = s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "jsonpath={.status.applicationState.state}")
	}
	if state != "COMPLETED" {
		out, _ := s.kubectl("get", "sparkapplications.sparkoperator.k8s.io", "spark-pi", "-o", "yaml")
		t.Fatalf("simulated spark-pi is %q, want COMPLETED:\n%s", state, out)
	}
	if out, err := s.kubectl("get", "pod", "spark-pi-driver"); err != nil || !strings.Contains(out, "READY") || !strings.Contains(out, "Completed") {
		t.Errorf("kubectl get pod prints no pod table: %v\n%s", err, out)
	}
	if logs, _ := s.kubectl("logs", "spark-pi-driver"); !strings.Contains(logs, "nothing was executed") {
		t.Errorf("kubectl logs of a simulated driver: %q", logs)
	}
	stopped = true
	s.stopAndCheckNothingIsLeft(t)
}

// unprivileged is a user without privileges the sandbox can run as.
type unprivileged struct {
	credential syscall.Credential
	env        []string
}

// nobody is the user nobody, with a home of its own and this process's PATH.
func nobody(t *testing.T) *unprivileged {
	t.Helper()
	u := &unprivileged{credential: syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	home := sharedTempDir(t)
	u.own(t, home)
	u.env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + home}
	return u
}

// own gives dir to the user.
func (u *unprivileged) own(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chown(dir, int(u.credential.Uid), int(u.credential.Gid)); err != nil {
		t.Fatal(err)
	}
}

// sharedTempDir is a temporary directory every user may read, removed after the test: a
// t.TempDir() sits in a directory only its owner may enter.
func sharedTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sparkhooks-local-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readableCopy returns a directory every user may read holding the files of dir (root's cache
// is not theirs to read): hard links where the file system allows them, else copies. A file that
// is a link to another of dir (the components of hack/kube's one executable) stays one, and
// its target comes along.
func readableCopy(t *testing.T, dir string, files ...string) string {
	t.Helper()
	out := sharedTempDir(t)
	copied := map[string]bool{}
	for len(files) > 0 {
		f := files[0]
		files = files[1:]
		if copied[f] {
			continue
		}
		copied[f] = true
		from, to := filepath.Join(dir, f), filepath.Join(out, f)
		if target, err := os.Readlink(from); err == nil && !filepath.IsAbs(target) && !strings.Contains(target, "/") {
			if err := os.Symlink(target, to); err != nil {
				t.Fatal(err)
			}
			files = append(files, target)
			continue
		}
		if os.Link(from, to) == nil {
			continue
		}
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// uidOf is the real user id of a process, -1 if it is gone.
func uidOf(pid int) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(status), "\n") {
		if fields, ok := strings.CutPrefix(line, "Uid:"); ok {
			uid, _ := strconv.Atoi(strings.Fields(fields)[0])
			return uid
		}
	}
	return -1
}

// TestBadInputIsOneLine: what would fail half-way fails at once, with one line saying what to do,
// and nothing keeps running.
func TestBadInputIsOneLine(t *testing.T) {
	sandbox, hooks := build(t)
	dataDir := t.TempDir()
	first := start(t, sandbox, "--simulate", "--api-addr", "127.0.0.1:0", "--sparkhooks", hooks, "--data-dir", dataDir)
	defer func() {
		_ = first.cmd.Process.Signal(syscall.SIGINT)
		<-first.exited
	}()
	apiAddr := field(first.output.String(), "kube-apiserver (https://")
	noKubectl := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"data dir in use", []string{"--simulate", "--api-addr", "127.0.0.1:0", "--sparkhooks", hooks, "--data-dir", dataDir}, nil, "is in use by another sparkhooks-local"},
		{"port in use", []string{"--simulate", "--api-addr", apiAddr, "--sparkhooks", hooks}, nil, apiAddr + " is in use"},
		{"no kubectl", []string{"--simulate"}, []string{"PATH=" + noKubectl}, "kubectl is not on PATH"},
		{"no hook server binary", []string{"--simulate", "--sparkhooks", filepath.Join(noKubectl, "missing")}, nil, "no sparkhooks binary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(sandbox, tc.args...)
			cmd.Env = append(os.Environ(), tc.env...)
			begin := time.Now()
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if err == nil || !strings.Contains(err.Error(), "exit status") || !asExit(err, &exit) {
				t.Fatalf("want a non-zero exit, got %v:\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Errorf("want one line with %q, got:\n%s", tc.want, out)
			}
			t.Logf("%s (%s)", lines[0], time.Since(begin).Round(10*time.Millisecond))
		})
	}
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*target = e
	return ok && e.ExitCode() != 0
}

// field returns what follows prefix on its line, up to a space, comma, semicolon or ")".
func field(output, prefix string) string {
	_, rest, ok := strings.Cut(output, prefix)
	if !ok {
		return ""
	}
	end := strings.IndexAny(rest, " ,;)\n")
	if end < 0 {
		return rest
	}
	return strings.TrimSuffix(rest[:end], ".")
}

// descendants lists every process below pid.
func descendants(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		// The command may hold spaces and parentheses; the fields after its closing one are fixed.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 {
			parent, _ := strconv.Atoi(fields[1])
			children[parent] = append(children[parent], p)
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c)
		}
	}
	walk(pid)
	return out
}

func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func commandOf(pid int) string {
	cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimSpace(string(cmd)), "\x00", " ")
}

// residentMiB sums the resident memory of the processes.
func residentMiB(pids []int) int {
	total := 0
	for _, pid := range pids {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				total += kb
			}
		}
	}
	return total / 1024
}
