//go:build e2e

package spark

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// TestHistoryServer turns on the operator's default event log and the chart's History Server, as
// an administrator would with helm upgrade, runs SparkPi and PySpark's pi without a word about
// event logs in their specs, and then, with their drivers gone (SparkPi's application deleted,
// PySpark's driver pod ended), finds both in the History Server with their jobs, and PySpark's
// page through kubectl spark ui. The log dir is a hostPath on the one node (the process kubelet mounts no
// claims); its namespace allows hostPath volumes, which baseline Pod Security forbids.
func TestHistoryServer(t *testing.T) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "sparkhooks-spark-events-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Drivers run as the image's spark user; so does the History Server.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	volume, err := json.Marshal(map[string]any{"hostPath": map[string]string{"path": dir, "type": "Directory"}})
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := shared.stack.SetChartValues(ctx,
		`eventLog.dir="file:`+dir+`"`, "eventLog.volume="+string(volume), "historyServer.enabled=true"); err != nil {
		t.Fatal(err)
	}
	t.Logf("helm upgrade with the event log and the History Server: %s", time.Since(started).Round(100*time.Millisecond))
	t.Cleanup(func() {
		if err := shared.stack.SetChartValues(ctx, "eventLog=null", "historyServer=null"); err != nil {
			t.Errorf("restoring the chart's values: %v", err)
			return
		}
		// The next tests run in baseline namespaces, where a driver with the hostPath volume
		// would be refused.
		core, err := kubernetesClient(shared.stack.Admin)
		if err != nil {
			t.Error(err)
			return
		}
		dep, err := core.AppsV1().Deployments(stack.SparkhooksNamespace).Get(ctx, "sparkhooks", metav1.GetOptions{})
		if err != nil {
			t.Errorf("reading the hook server's Deployment: %v", err)
			return
		}
		for _, arg := range dep.Spec.Template.Spec.Containers[0].Args {
			if strings.HasPrefix(arg, "--default-event-log") || strings.HasPrefix(arg, "--history-server-url") {
				t.Errorf("the chart's values are restored, but the hook server still runs with %s", arg)
			}
		}
	})

	n := newNamespaceWithLabels(t, "history", map[string]string{podSecurityEnforce: "privileged"})
	apps := map[string]string{"spark-pi": "spark-pi.yaml", "pyspark-pi": "pyspark-pi.yaml"}
	for _, file := range apps {
		n.applyExample(file)
	}
	historyServer := &namespace{t: t, name: stack.SparkhooksNamespace, core: n.core, dyn: n.dyn}
	ids := map[string]string{} // application name by Spark application id
	var pysparkID string
	for name := range apps {
		app := n.waitAppState(name, "COMPLETED", appTimeout)
		id := nestedString(app, "status", "sparkApplicationId")
		want := fmt.Sprintf("http://sparkhooks-history.%s.svc:18080/history/%s/jobs/", stack.SparkhooksNamespace, id)
		if got := nestedString(app, "status", "historyURL"); got != want {
			t.Errorf("%s: status.historyURL %q, want %q", name, got, want)
		}
		ids[id] = name
		if name == "pyspark-pi" {
			pysparkID = id
			continue // its driver pod has ended; kubectl spark ui below needs the application
		}
		driver := nestedString(app, "status", "driverInfo", "podName")
		if _, err := n.kubectl("delete", "sparkapplication", name, "--wait"); err != nil {
			t.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			_, err := n.pod(driver)
			return apierrors.IsNotFound(err), nil
		}); err != nil {
			t.Fatalf("driver %s of %s still there a minute after the application was deleted", driver, name)
		}
	}
	gone := time.Now()

	// The server scans the dir every 10 s (spark.history.fs.update.interval).
	type attempt struct {
		Completed bool `json:"completed"`
	}
	var listing string
	var lastErr error
	var base string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(context.Context) (bool, error) {
		if base, lastErr = historyServer.serviceURL("sparkhooks-history", 18080); lastErr != nil {
			return false, nil
		}
		if listing, lastErr = httpGet(base + "/api/v1/applications"); lastErr != nil {
			return false, nil
		}
		var list []struct {
			ID       string    `json:"id"`
			Attempts []attempt `json:"attempts"`
		}
		if lastErr = json.Unmarshal([]byte(listing), &list); lastErr != nil {
			return false, nil
		}
		found := 0
		for _, a := range list {
			if _, ok := ids[a.ID]; ok && len(a.Attempts) > 0 && a.Attempts[0].Completed {
				found++
			}
		}
		return found == len(ids), nil
	}); err != nil {
		t.Fatalf("the History Server does not list %v as completed within 2 minutes (last error %v): %s", ids, lastErr, listing)
	}
	t.Logf("both applications listed as completed %s after their drivers were gone", time.Since(gone).Round(100*time.Millisecond))

	for id, name := range ids {
		jobs, err := httpGet(base + "/api/v1/applications/" + id + "/jobs")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var list []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal([]byte(jobs), &list); err != nil {
			t.Fatalf("%s: %v: %s", name, err, jobs)
		}
		if len(list) == 0 || list[0].Status != "SUCCEEDED" {
			t.Errorf("%s: the History Server has jobs %s, want a SUCCEEDED one (the reduce of pi)", name, jobs)
		}
		page, err := httpGet(base + "/history/" + id + "/jobs/")
		if err != nil {
			t.Fatalf("%s: the page status.historyURL names: %v", name, err)
		}
		if !strings.Contains(page, "Spark Jobs") {
			t.Errorf("%s: the History Server's page of %s shows no jobs:\n%s", name, id, tail(page, 20))
		}
	}
	checkUI(t, n, "pyspark-pi", pysparkID, ids)
}

// uiURL is the line kubectl spark ui prints once its forward listens.
var uiURL = regexp.MustCompile(`History Server page of [a-z-]+: (http://localhost:\d+/\S+)`)

// checkUI runs kubectl-spark ui for an application whose driver has ended and reads the
// History Server's page of it through the port-forward it prints, has headless Chromium render
// the server's listing (which its scripts draw) through the same forward and finds every id of
// listed in it, then stops kubectl-spark with Ctrl-C.
func checkUI(t *testing.T, n *namespace, app, id string, listed map[string]string) {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "kubectl-spark")
	if out, err := exec.Command("go", "build", "-C", repoRoot, "-o", binary, "./cmd/kubectl-spark").CombinedOutput(); err != nil {
		t.Fatalf("building kubectl-spark: %v\n%s", err, out)
	}
	ui := exec.Command(binary, "--kubeconfig", shared.stack.Kubeconfig, "--namespace", n.name, "ui", app)
	stdout, err := ui.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	ui.Stderr = &stderr
	if err := ui.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	exited := make(chan error, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if m := uiURL.FindStringSubmatch(scanner.Text()); m != nil {
				found <- m[1]
			}
		}
		exited <- ui.Wait()
	}()
	defer func() {
		_ = ui.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = ui.Process.Kill()
			t.Errorf("kubectl spark ui did not stop within 30 s of Ctrl-C")
		}
	}()
	var page string
	select {
	case page = <-found:
	case err := <-exited:
		t.Fatalf("kubectl spark ui %s exited: %v\n%s", app, err, stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("kubectl spark ui %s printed no URL within a minute\n%s", app, stderr.String())
	}
	if !strings.HasSuffix(page, "/history/"+id+"/jobs/") {
		t.Errorf("kubectl spark ui %s prints %s, want the History Server's page of %s", app, page, id)
	}
	body, err := httpGet(page)
	if err != nil {
		t.Fatalf("the page kubectl spark ui prints: %v", err)
	}
	if !strings.Contains(body, "Spark Jobs") {
		t.Errorf("%s shows no jobs:\n%s", page, tail(body, 20))
	}
	t.Logf("kubectl spark ui %s: %s", app, page)

	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("headless Chromium renders the History Server's listing: install Debian's chromium package (.ci/run does): %v", err)
	}
	root := page[:strings.Index(page, "/history/")+1]
	started := time.Now()
	// Root has no user namespace for Chromium's sandbox; the page is the test's own server's.
	dom, err := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000", "--dump-dom", root).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom %s: %v", root, err)
	}
	for listedID, name := range listed {
		if !strings.Contains(string(dom), listedID) {
			t.Errorf("the History Server's listing as Chromium renders it has no %s (%s):\n%s", listedID, name, tail(string(dom), 40))
		}
	}
	t.Logf("Chromium rendered the listing with %d applications in %s", len(listed), time.Since(started).Round(100*time.Millisecond))
}
