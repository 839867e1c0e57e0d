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

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
	"github.com/sparkhooks/sparkhooks/sandbox/internal/stack"
)

// s3aEventLog is what a user adds to an application on the stock Spark image whose event log goes
// to an s3a:// dir: the S3A jars on the driver's class path (from a volume here, the cached
// fixture; from the user's image or a volume of theirs on a cluster), the store's endpoint, and
// its credentials from a Secret, which S3A reads from the environment. Only the driver writes the
// event log: executors need S3A only for jobs that read or write s3a:// themselves.
const s3aEventLog = `
spec:
  sparkConf:
    spark.driver.extraClassPath: /opt/s3a/*
  hadoopConf:
    fs.s3a.endpoint: %[2]s
    fs.s3a.endpoint.region: us-east-1
    fs.s3a.path.style.access: "true"
  volumes:
    - name: s3a-jars
      hostPath: {path: %[1]s, type: Directory}
  driver:
    volumeMounts:
      - {name: s3a-jars, mountPath: /opt/s3a, readOnly: true}
    envFrom:
      - secretRef: {name: s3-credentials}
`

// TestHistoryServer turns on the operator's default event log in an S3-compatible store (MinIO,
// through S3A) and the chart's History Server, as an administrator would with helm upgrade, runs
// SparkPi and PySpark's pi of Spark 4.0 (the examples, with only what S3A needs added, nothing
// about event logs), and then, with their drivers gone (SparkPi's application deleted, PySpark's
// driver pod ended), finds both logs in the store and both applications in the History Server
// with their jobs, and PySpark's page through kubectl spark ui. The file: dir on a volume is
// TestMakeRunRunsSparkPi's (sandbox/e2e/local). The S3A jars are a hostPath in the drivers and
// the server; the test's namespace allows hostPath volumes, which baseline Pod Security forbids.
//
// It runs alone, never beside the parallel tests (no parallelOnRealNode): the operator's default
// event log is every application's, and another test's driver would get the S3A dir without the
// S3A jars.
func TestHistoryServer(t *testing.T) {
	ctx := context.Background()
	jars := harness.Fixture(t, "S3A_JARS_DIR")
	const bucket, prefix = "spark-events", "events/"
	store := harness.StartMinIO(t, shared.hostIP, bucket)
	// The History Server refuses a log dir that does not exist.
	if _, err := store.Client.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(prefix), Body: strings.NewReader("")}); err != nil {
		t.Fatal(err)
	}
	core, err := kubernetesClient(shared.stack.Admin)
	if err != nil {
		t.Fatal(err)
	}
	credentials := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s3-credentials"},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": store.AccessKey, "AWS_SECRET_ACCESS_KEY": store.SecretKey},
	}
	if _, err := core.CoreV1().Secrets(stack.SparkhooksNamespace).Create(ctx, credentials, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := core.CoreV1().Secrets(stack.SparkhooksNamespace).Delete(ctx, credentials.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the History Server's credentials: %v", err)
		}
	})
	set, err := historyServerS3AValues("s3a://"+bucket+"/"+strings.TrimSuffix(prefix, "/"), store.Endpoint, jars, credentials.Name)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := shared.stack.SetChartValues(ctx, set...); err != nil {
		t.Fatal(err)
	}
	t.Logf("helm upgrade with the event log and the History Server: %s", time.Since(started).Round(100*time.Millisecond))
	t.Cleanup(func() {
		if err := shared.stack.SetChartValues(ctx, "eventLog=null", "historyServer=null"); err != nil {
			t.Errorf("restoring the chart's values: %v", err)
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
	if _, err := core.CoreV1().Secrets(n.name).Create(ctx, credentials, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	apps := map[string]string{"spark-pi-spark4": "spark-pi-spark4.yaml", "pyspark-pi-spark4": "pyspark-pi-spark4.yaml"}
	for _, file := range apps {
		manifest, err := withOverlay(file, fmt.Sprintf(s3aEventLog, jars, store.Endpoint))
		if err != nil {
			t.Fatal(err)
		}
		if out, err := n.applyManifest(manifest); err != nil {
			t.Fatalf("applying examples/%s with S3A: %v", file, err)
		} else {
			t.Logf("examples/%s with S3A: %s", file, strings.TrimSpace(out))
		}
	}
	historyServer := &namespace{t: t, name: stack.SparkhooksNamespace, core: n.core, dyn: n.dyn}
	ids := map[string]string{} // application name by Spark application id
	var pysparkID string
	for name := range apps {
		// Twice a lone application's bound: the two run side by side on the machine's two cores.
		app := n.waitAppState(name, "COMPLETED", 2*appTimeout)
		id := harness.NestedString(app, "status", "sparkApplicationId")
		want := fmt.Sprintf("http://sparkhooks-history.%s.svc:18080/history/%s/jobs/", stack.SparkhooksNamespace, id)
		if got := harness.NestedString(app, "status", "historyURL"); got != want {
			t.Errorf("%s: status.historyURL %q, want %q", name, got, want)
		}
		ids[id] = name
		if name == "pyspark-pi-spark4" {
			pysparkID = id
			continue // its driver pod has ended; kubectl spark ui below needs the application
		}
		driver := harness.NestedString(app, "status", "driverInfo", "podName")
		if _, err := n.kubectl("delete", "sparkapplications.sparkoperator.k8s.io", name, "--wait"); err != nil {
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
			t.Errorf("%s: the History Server's page of %s shows no jobs:\n%s", name, id, harness.Tail(page, 20))
		}
	}
	for id, name := range ids {
		checkEventLogObjects(t, store, bucket, prefix, id, name)
	}
	checkUI(t, n, "pyspark-pi-spark4", pysparkID, ids)
}

// historyServerS3AValues are the chart values (helm --set-json) of an event log dir in an
// S3-compatible store at endpoint, and of the History Server reading it with the S3A jars from a
// hostPath and the credentials from a Secret.
func historyServerS3AValues(dir, endpoint, jars, secret string) ([]string, error) {
	values := map[string]any{
		"eventLog.dir":          dir,
		"historyServer.enabled": true,
		"historyServer.sparkConf": map[string]string{
			"spark.hadoop.fs.s3a.endpoint":          endpoint,
			"spark.hadoop.fs.s3a.endpoint.region":   "us-east-1",
			"spark.hadoop.fs.s3a.path.style.access": "true",
		},
		"historyServer.env": []any{
			map[string]string{"name": "SPARK_DAEMON_CLASSPATH", "value": "/opt/s3a/*"},
			secretEnv("AWS_ACCESS_KEY_ID", secret),
			secretEnv("AWS_SECRET_ACCESS_KEY", secret),
		},
		"historyServer.volumes": []any{
			map[string]any{"name": "s3a-jars", "hostPath": map[string]string{"path": jars, "type": "Directory"}},
		},
		"historyServer.volumeMounts": []any{
			map[string]any{"name": "s3a-jars", "mountPath": "/opt/s3a", "readOnly": true},
		},
	}
	var set []string
	for key, value := range values {
		data, err := json.Marshal(value)
		if err != nil {
			return nil, err
		}
		set = append(set, key+"="+string(data))
	}
	return set, nil
}

// secretEnv is an environment variable from the key of its name in a Secret.
func secretEnv(name, secret string) map[string]any {
	return map[string]any{"name": name, "valueFrom": map[string]any{"secretKeyRef": map[string]string{"name": secret, "key": name}}}
}

// withOverlay is the example file with overlay (YAML) merged into it, maps key by key.
func withOverlay(file, overlay string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples", file))
	if err != nil {
		return nil, err
	}
	var base, extra map[string]any
	if err := yaml.Unmarshal(data, &base); err != nil {
		return nil, fmt.Errorf("examples/%s: %w", file, err)
	}
	if err := yaml.Unmarshal([]byte(overlay), &extra); err != nil {
		return nil, err
	}
	merge(base, extra)
	return yaml.Marshal(base)
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if into, ok := dst[k].(map[string]any); ok {
				merge(into, sub)
				continue
			}
		}
		dst[k] = v
	}
}

// checkEventLogObjects finds an application's event log in the store as Spark writes a rolling
// log (eventlog_v2_ID/ with events_1_ID.zstd, compressed, and appstatus_ID, whose .inprogress
// suffix goes when the application ends).
func checkEventLogObjects(t *testing.T, store *harness.S3Store, bucket, prefix, id, name string) {
	t.Helper()
	dir := prefix + "eventlog_v2_" + id + "/"
	out, err := store.Client.ListObjectsV2(context.Background(), &awss3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(dir)})
	if err != nil {
		t.Fatalf("listing s3://%s/%s: %v", bucket, dir, err)
	}
	sizes := map[string]int64{}
	for _, o := range out.Contents {
		sizes[strings.TrimPrefix(aws.ToString(o.Key), dir)] = aws.ToInt64(o.Size)
	}
	if _, ok := sizes["appstatus_"+id]; !ok || sizes["events_1_"+id+".zstd"] == 0 {
		t.Errorf("%s: s3://%s/%s holds %v, want a non-empty events_1_%s.zstd and appstatus_%s", name, bucket, dir, sizes, id, id)
		return
	}
	t.Logf("%s: s3://%s/%sevents_1_%s.zstd, %d bytes", name, bucket, dir, id, sizes["events_1_"+id+".zstd"])
}

// uiURL is the line kubectl spark ui prints once its forward listens.
var uiURL = regexp.MustCompile(`History Server page of [a-z0-9-]+: (http://localhost:\d+/\S+)`)

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
		t.Errorf("%s shows no jobs:\n%s", page, harness.Tail(body, 20))
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
			t.Errorf("the History Server's listing as Chromium renders it has no %s (%s):\n%s", listedID, name, harness.Tail(string(dom), 40))
		}
	}
	t.Logf("Chromium rendered the listing with %d applications in %s", len(listed), time.Since(started).Round(100*time.Millisecond))
}
