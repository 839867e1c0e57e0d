package children_test

// Parity with the Kubeflow Spark Operator, from an independent oracle: for every SparkApplication
// in examples/ (and the synthetic specs in testdata/kubeflow/specs/, for the fields no example
// sets), testdata/kubeflow/<name>.args holds the spark-submit argv Kubeflow would run for that
// spec, written by hand from the research notes on Kubeflow's submission code
// (shared/research/kubeflow.md §1.13, §3.1-§3.5), not from this package. The test turns that argv
// into the configuration spark-submit would put into the driver's spark.properties, the way
// SparkSubmit does, and checks that the spark.properties we render holds every key of it with the
// same value, except for the deliberate differences in kfDeliberateDifferences, each with its
// reason. It also checks the main class, main application file, arguments and proxy user against
// the driver container's args, and the keys spark-submit itself adds to spark.properties.

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/javaprops"
)

const (
	kfNamespace   = "spark-jobs"
	kfUID         = types.UID("6c1d7c2a-93f0-4d4e-b1a5-2f8e9a7b0c11")
	kfArgsDir     = "testdata/kubeflow"
	kfExamplesDir = "../../examples"
	kfSpecsDir    = "testdata/kubeflow/specs"

	// The placeholders of the .args files.
	kfSubmissionIDToken   = "${SUBMISSION_ID}"
	kfDriverTemplateToken = "${DRIVER_POD_TEMPLATE}"
	kfExecTemplateToken   = "${EXECUTOR_POD_TEMPLATE}"

	kfPythonRunner = "org.apache.spark.deploy.PythonRunner"
	kfRRunner      = "org.apache.spark.deploy.RRunner"
	kfNoResource   = "spark-internal" // SparkLauncher.NO_RESOURCE
)

// kfLauncherNoResourceClasses are the main classes spark-submit's launcher runs with the primary
// resource spark-internal when the command line names none (SparkSubmitCommandBuilder's
// specialClasses, less the shells).
var kfLauncherNoResourceClasses = map[string]bool{
	"org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver": true,
	"org.apache.spark.sql.hive.thriftserver.HiveThriftServer2": true,
	"org.apache.spark.sql.connect.service.SparkConnectServer":  true,
}

// kfCase is one example, built by us, next to what Kubeflow's spark-submit would make of it.
type kfCase struct {
	name   string
	app    *v1beta2.SparkApplication
	sub    children.Submission
	objs   *children.Objects
	ours   map[string]string // our spark.properties, as the driver reads it
	submit kfSubmit          // Kubeflow's spark-submit, as SparkSubmit reads it
}

// kfDeliberate is a key whose value in our spark.properties may differ from Kubeflow's, by
// design. ok reports whether our value (present says whether we have the key at all) is right
// for Kubeflow's value kf. Nothing else may differ.
type kfDeliberate struct {
	reason string
	ok     func(c *kfCase, kf, ours string, present bool) bool
}

var kfDeliberateDifferences = map[string]kfDeliberate{
	// Kubeflow's controller reaches the API server at $KUBERNETES_SERVICE_HOST:PORT, the
	// Service IP. Inside the driver spark.master is only checked for its k8s:// prefix and
	// scheme (Utils.checkAndGetK8sMasterUrl); the driver talks to the API server through
	// spark.kubernetes.driver.master. We use the in-cluster DNS name instead of an IP taken from
	// the hook's environment, so the objects do not depend on where the hook runs.
	"spark.master": {
		reason: "in-cluster DNS name instead of the submitter's KUBERNETES_SERVICE_HOST; only the scheme matters in the driver",
		ok: func(_ *kfCase, kf, ours string, present bool) bool {
			return present && strings.HasPrefix(kf, "k8s://https://") && strings.HasPrefix(ours, "k8s://https://")
		},
	},
	// spark-submit reads the driver pod template when it builds the driver Pod, in the
	// submitting process; in the driver the key is inert. We build the driver Pod ourselves,
	// with the template merged in, so there is no template file to point at.
	"spark.kubernetes.driver.podTemplateFile": {
		reason: "the driver Pod is built by us, not by spark-submit from a template file",
		ok:     func(_ *kfCase, _, _ string, present bool) bool { return !present },
	},
	"spark.kubernetes.driver.podTemplateContainerName": {
		reason: "the driver Pod is built by us, not by spark-submit from a template file",
		ok:     func(_ *kfCase, _, _ string, present bool) bool { return !present },
	},
	// Same role, another path: Kubeflow's file lives in the operator Pod's /tmp (spark-submit
	// then ships it in a ConfigMap mounted into the driver); ours is the executor template in
	// our ConfigMap, mounted into the driver. Spark < 3.0 has no executor pod templates: there the
	// key does nothing, and our executor customizations go through the webhook instead.
	"spark.kubernetes.executor.podTemplateFile": {
		reason: "our executor template is a key of our ConfigMap, mounted into the driver, not a file in the operator Pod",
		ok: func(c *kfCase, _, ours string, present bool) bool {
			if !present {
				return !kfSparkAtLeast3(c.app)
			}
			return kfMountedInDriver(c, ours)
		},
	},
	// Kubeflow marks the Pods its pod webhook still has to complete (Spark < 3.0, or a role
	// without a user template) with this label. It is informational: Kubeflow's webhook selects
	// on launched-by-spark-operator, and so does ours. No webhook pass completes our driver Pod,
	// which is built whole; executors get their customizations from our executor pod template,
	// or, on Spark < 3.0, from the customization annotation, which is what our webhook acts on.
	// The label would claim a mutation that does not happen, so we leave it out.
	"spark.kubernetes.driver.label.sparkoperator.k8s.io/mutated-by-spark-operator": {
		reason: "informational label for Kubeflow's webhook pass; our driver Pod is built whole",
		ok:     func(_ *kfCase, _, _ string, present bool) bool { return !present },
	},
	"spark.kubernetes.executor.label.sparkoperator.k8s.io/mutated-by-spark-operator": {
		reason: "informational label for Kubeflow's webhook pass; executors are shaped by our executor template or customization annotation",
		ok:     func(_ *kfCase, _, _ string, present bool) bool { return !present },
	},
	// The name of the Spark container in the executor template: absent on Spark < 3.0 with the
	// template itself, otherwise Kubeflow's name, which our template's Spark container has too.
	"spark.kubernetes.executor.podTemplateContainerName": {
		reason: "goes with spark.kubernetes.executor.podTemplateFile",
		ok: func(c *kfCase, kf, ours string, present bool) bool {
			if !present {
				return !kfSparkAtLeast3(c.app)
			}
			return ours == kf && kfExecutorTemplateHasContainer(c, ours)
		},
	},
}

// TestKubeflowParity is the Done-when check of "Sync hook, part 1": for each example, the
// rendered spark.properties contain the effective Spark configuration of the Kubeflow operator's
// spark-submit arguments for that spec.
func TestKubeflowParity(t *testing.T) {
	cases := kfLoadCases(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var report []string
			report = append(report, kfCompareConf(c)...)
			report = append(report, kfCompareDriverArgs(t, c)...)
			report = append(report, kfCheckSubmitAdded(c)...)
			if len(report) > 0 {
				t.Errorf("%s differs from Kubeflow's spark-submit (%s):\n  %s",
					c.name, filepath.Join(kfArgsDir, c.name+".args"), strings.Join(report, "\n  "))
			}
		})
	}
}

// TestKubeflowParityAllowlist keeps the allowlist honest: every entry has a reason and is used
// by at least one example, so that a difference that went away does not stay allowed.
func TestKubeflowParityAllowlist(t *testing.T) {
	cases := kfLoadCases(t)
	for key, d := range kfDeliberateDifferences {
		if strings.TrimSpace(d.reason) == "" {
			t.Errorf("allowlisted key %s has no reason", key)
		}
		used := false
		for _, c := range cases {
			kf, inKF := c.submit.conf[key]
			ours, inOurs := c.ours[key]
			if inKF && (!inOurs || ours != kf) {
				used = true
				break
			}
		}
		if !used {
			t.Errorf("allowlisted key %s never differs from Kubeflow in any example: drop it from kfDeliberateDifferences", key)
		}
	}
}

// kfCompareConf checks every key of Kubeflow's effective conf against ours.
func kfCompareConf(c *kfCase) []string {
	var missing, differ, allowed []string
	for _, key := range kfSortedKeys(c.submit.conf) {
		kf := c.submit.conf[key]
		ours, present := c.ours[key]
		if d, ok := kfDeliberateDifferences[key]; ok {
			if !d.ok(c, kf, ours, present) {
				allowed = append(allowed, fmt.Sprintf("%s: ours %s, Kubeflow %q, and the deliberate difference (%s) does not cover that",
					key, kfShow(ours, present), kf, d.reason))
			}
			continue
		}
		switch {
		case !present:
			missing = append(missing, fmt.Sprintf("%s=%s", key, kf))
		case ours != kf:
			differ = append(differ, fmt.Sprintf("%s: ours %q, Kubeflow %q", key, ours, kf))
		}
	}
	var out []string
	if len(missing) > 0 {
		out = append(out, fmt.Sprintf("%d key(s) missing from our spark.properties:\n    %s", len(missing), strings.Join(missing, "\n    ")))
	}
	if len(differ) > 0 {
		out = append(out, fmt.Sprintf("%d value(s) differ:\n    %s", len(differ), strings.Join(differ, "\n    ")))
	}
	if len(allowed) > 0 {
		out = append(out, fmt.Sprintf("%d deliberate difference(s) out of bounds:\n    %s", len(allowed), strings.Join(allowed, "\n    ")))
	}
	return out
}

// kfCompareDriverArgs checks what spark-submit passes to the driver container rather than as
// properties: the main class, the main application file, its arguments, the proxy user.
func kfCompareDriverArgs(t *testing.T, c *kfCase) []string {
	ctr := kfSparkContainer(t, c.objs.DriverPod)
	got, err := kfParseDriverArgs(ctr.Args)
	if err != nil {
		return []string{fmt.Sprintf("driver container args %q: %v", ctr.Args, err)}
	}
	s := c.submit
	var out []string
	if got.mainClass != s.effectiveMainClass() {
		out = append(out, fmt.Sprintf("main class: driver args have %q, Kubeflow's --class gives %q", got.mainClass, s.effectiveMainClass()))
	}
	// Spark before 3.1 passed JVM apps' jar as spark-internal (SparkLauncher.NO_RESOURCE) and
	// let spark.jars carry it; either form runs the same jar.
	primaryOK := got.resource == s.primary ||
		(got.resource == kfNoResource && s.jvm() && slices.Contains(strings.Split(c.ours["spark.jars"], ","), s.primary))
	if !primaryOK {
		out = append(out, fmt.Sprintf("main application file: driver args have %q, Kubeflow passes %q", got.resource, s.primary))
	}
	if !slices.Equal(got.appArgs, s.appArgs) {
		out = append(out, fmt.Sprintf("application arguments: driver args have %q, Kubeflow passes %q", got.appArgs, s.appArgs))
	}
	if got.proxyUser != s.proxyUser {
		out = append(out, fmt.Sprintf("proxy user: driver args have %q, Kubeflow's --proxy-user is %q", got.proxyUser, s.proxyUser))
	}
	return out
}

// kfCheckSubmitAdded checks the keys spark-submit itself adds to spark.properties on top of its
// arguments (research spark-pod.md §3.2), so that Kubeflow's driver would see them too.
func kfCheckSubmitAdded(c *kfCase) []string {
	svc := ""
	if c.objs.DriverService != nil {
		svc = c.objs.DriverService.Name
	}
	resourceType, overheadFactor := "java", "0.1"
	if !c.submit.jvm() {
		resourceType, overheadFactor = "r", "0.4"
		if c.submit.python() {
			resourceType = "python"
		}
	}
	appID := regexp.MustCompile(`^spark-[0-9a-f]{32}$`)
	host := svc + "." + kfNamespace + ".svc"
	want := []kfWant{
		{"spark.app.id", func(v string) bool { return appID.MatchString(v) && v == c.sub.AppID },
			fmt.Sprintf("spark-<32 hex>, the submission's %q", c.sub.AppID)},
		{"spark.kubernetes.submitInDriver", kfEquals("true"), `"true"`},
		{"spark.driver.host", kfEquals(host), fmt.Sprintf("%q, the driver Service", host)},
		{"spark.driver.port", kfEquals("7078"), `"7078"`},
		{"spark.driver.blockManager.port", kfEquals("7079"), `"7079"`},
		{"spark.kubernetes.driver.pod.name", kfEquals(c.objs.DriverPod.Name), fmt.Sprintf("%q, the driver Pod's name", c.objs.DriverPod.Name)},
		{"spark.kubernetes.namespace", kfEquals(kfNamespace), fmt.Sprintf("%q", kfNamespace)},
		{"spark.kubernetes.resource.type", kfEquals(resourceType), fmt.Sprintf("%q", resourceType)},
	}
	// BasicDriverFeatureStep writes the overhead factor it used, 0.4 for Python and R, so that
	// executors use it too; a user value passes through unchanged.
	if _, set := c.submit.conf["spark.kubernetes.memoryOverheadFactor"]; !set {
		want = append(want, kfWant{"spark.kubernetes.memoryOverheadFactor", kfEquals(overheadFactor),
			fmt.Sprintf("%q (%s app)", overheadFactor, resourceType)})
	}
	var out []string
	for _, w := range want {
		v, ok := c.ours[w.key]
		if !ok || !w.check(v) {
			out = append(out, fmt.Sprintf("spark-submit adds %s: ours %s, want %s", w.key, kfShow(v, ok), w.what))
		}
	}
	if c.objs.DriverPod.Namespace != kfNamespace {
		out = append(out, fmt.Sprintf("driver Pod namespace %q, want %q", c.objs.DriverPod.Namespace, kfNamespace))
	}
	return out
}

// kfWant is a property spark-submit adds, with the check of our value and what it expects.
type kfWant struct {
	key   string
	check func(string) bool
	what  string
}

func kfEquals(want string) func(string) bool { return func(v string) bool { return v == want } }

func kfShow(v string, present bool) string {
	if !present {
		return "absent"
	}
	return strconv.Quote(v)
}

// kfLoadCases builds every SparkApplication example and reads its .args file. An example
// without an .args file, or an .args file without an example, fails the test.
func kfLoadCases(t *testing.T) []*kfCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(kfExamplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s: %v", kfExamplesDir, err)
	}
	// Synthetic specs for the fields no example sets.
	specs, err := filepath.Glob(filepath.Join(kfSpecsDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, specs...)
	var cases []*kfCase
	seen := map[string]bool{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		app := &v1beta2.SparkApplication{}
		if err := yaml.Unmarshal(data, app); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		// ScheduledSparkApplications have no .args of their own: their runs are
		// SparkApplications built from the same spec.template, by the same code.
		if app.Kind != v1beta2.KindSparkApplication {
			continue
		}
		// Kubeflow's webhook refuses spark.master: an application on a standalone cluster has
		// no Kubeflow counterpart.
		if v1beta2.StandaloneMaster(app.Spec.SparkConf["spark.master"]) {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		seen[name] = true
		app.Namespace, app.UID = kfNamespace, kfUID
		v1beta2.SetSparkApplicationDefaults(app)
		if errs := v1beta2.ValidateSparkApplication(app); len(errs) > 0 {
			t.Fatalf("%s: invalid: %v", file, errs.ToAggregate())
		}
		sub := children.NewSubmission(app.UID, 1)
		objs, err := children.Build(app, sub, children.Options{EnableUIService: true})
		if err != nil {
			t.Fatalf("%s: build: %v", file, err)
		}
		props, ok := objs.ConfigMap.Data["spark.properties"]
		if !ok {
			t.Fatalf("%s: the ConfigMap %s has no spark.properties", file, objs.ConfigMap.Name)
		}
		ours, err := javaprops.Parse(props)
		if err != nil {
			t.Fatalf("%s: spark.properties: %v", file, err)
		}
		argsFile := filepath.Join(kfArgsDir, name+".args")
		argv, err := kfReadArgs(argsFile, map[string]string{
			kfSubmissionIDToken: sub.SubmissionID,
			// Where Kubeflow writes the templates (kubeflow.md §3.2).
			kfDriverTemplateToken: "/tmp/spark/" + sub.SubmissionID + "/driver-pod-template.yaml",
			kfExecTemplateToken:   "/tmp/spark/" + sub.SubmissionID + "/executor-pod-template.yaml",
		})
		if err != nil {
			t.Fatalf("%s: no Kubeflow oracle for this example: %v", file, err)
		}
		submit, err := kfSparkSubmit(argv)
		if err != nil {
			t.Fatalf("%s: %v", argsFile, err)
		}
		cases = append(cases, &kfCase{name: name, app: app, sub: sub, objs: objs, ours: ours, submit: submit})
	}
	argsFiles, _ := filepath.Glob(filepath.Join(kfArgsDir, "*.args"))
	for _, f := range argsFiles {
		if name := strings.TrimSuffix(filepath.Base(f), ".args"); !seen[name] {
			t.Errorf("%s has no SparkApplication examples/%s.yaml or %s/%s.yaml", f, name, kfSpecsDir, name)
		}
	}
	if len(cases) < 16 {
		t.Fatalf("only %d SparkApplications", len(cases))
	}
	return cases
}

// kfReadArgs reads an argv file: one argument per line, after optional # comment lines at the
// top, with the placeholders replaced.
func kfReadArgs(file string, vars map[string]string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var argv []string
	header := true
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		line := sc.Text()
		if header && strings.HasPrefix(line, "#") {
			continue
		}
		header = false
		for token, value := range vars {
			line = strings.ReplaceAll(line, token, value)
		}
		if strings.Contains(line, "${") {
			return nil, fmt.Errorf("unknown placeholder in %q", line)
		}
		argv = append(argv, line)
	}
	return argv, sc.Err()
}

// kfSubmit is what SparkSubmit makes of an argv: the configuration it writes (spark.properties
// holds every explicitly set key) and what it passes to the driver as arguments.
type kfSubmit struct {
	conf      map[string]string
	mainClass string // --class
	proxyUser string
	primary   string
	appArgs   []string
}

func (s kfSubmit) python() bool { return strings.HasSuffix(s.primary, ".py") }

func (s kfSubmit) r() bool {
	return strings.HasSuffix(s.primary, ".R") || strings.HasSuffix(s.primary, ".r")
}

func (s kfSubmit) jvm() bool { return !s.python() && !s.r() }

// effectiveMainClass is the class the driver runs: spark-submit replaces it for Python and R.
func (s kfSubmit) effectiveMainClass() string {
	switch {
	case s.python():
		return kfPythonRunner
	case s.r():
		return kfRRunner
	}
	return s.mainClass
}

// kfSparkSubmit parses spark-submit's command line as SparkSubmitArguments does and derives the
// properties SparkSubmit.prepareSubmitEnvironment sets from the flags. A flag wins over the
// --conf of the same key; the last --conf of a key wins; the first positional argument is the
// primary resource and everything after it belongs to the application (without one, the
// launcher's no-resource classes run with spark-internal).
func kfSparkSubmit(argv []string) (kfSubmit, error) {
	s := kfSubmit{conf: map[string]string{}}
	flags := map[string]string{
		"--master":           "spark.master",
		"--deploy-mode":      "spark.submit.deployMode",
		"--name":             "spark.app.name",
		"--jars":             "spark.jars",
		"--packages":         "spark.jars.packages",
		"--exclude-packages": "spark.jars.excludes",
		"--repositories":     "spark.jars.repositories",
		"--py-files":         "spark.submit.pyFiles",
		"--files":            "spark.files",
		"--archives":         "spark.archives",
	}
	fromFlags := map[string]string{}
	i := 0
	for ; i < len(argv); i++ {
		arg := argv[i]
		if !strings.HasPrefix(arg, "--") {
			break
		}
		if arg == "--load-spark-defaults" { // a switch, without a value
			continue
		}
		if i+1 >= len(argv) {
			return s, fmt.Errorf("%s has no value", arg)
		}
		value := argv[i+1]
		i++
		switch arg {
		case "--conf":
			k, v, ok := strings.Cut(value, "=")
			if !ok {
				return s, fmt.Errorf("--conf %q is not key=value", value)
			}
			s.conf[k] = v
		case "--class":
			s.mainClass = value
		case "--proxy-user":
			s.proxyUser = value
		default:
			key, ok := flags[arg]
			if !ok {
				return s, fmt.Errorf("unknown spark-submit option %s", arg)
			}
			fromFlags[key] = value
		}
	}
	switch {
	case i < len(argv):
		s.primary, s.appArgs = argv[i], append([]string(nil), argv[i+1:]...)
	case kfLauncherNoResourceClasses[s.mainClass]:
		s.primary = kfNoResource
	default:
		return s, fmt.Errorf("no primary resource")
	}
	for k, v := range fromFlags {
		s.conf[k] = v
	}
	// "Add the application jar automatically so the user doesn't have to call sc.addJar":
	// for JVM apps SparkSubmit appends the primary resource to spark.jars.
	if s.jvm() && s.primary != kfNoResource {
		jars := s.conf["spark.jars"]
		if jars != "" {
			jars += ","
		}
		s.conf["spark.jars"] = jars + s.primary
	}
	return s, nil
}

// kfDriverArgs are the driver container's args: driver [--proxy-user u] --properties-file f
// [--class c] resource args...
type kfDriverArgs struct {
	proxyUser, mainClass, resource string
	appArgs                        []string
}

func kfParseDriverArgs(args []string) (kfDriverArgs, error) {
	var d kfDriverArgs
	if len(args) == 0 || args[0] != "driver" {
		return d, fmt.Errorf("want the entrypoint's driver mode first")
	}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "--") {
		if i+1 >= len(args) {
			return d, fmt.Errorf("%s has no value", args[i])
		}
		switch args[i] {
		case "--proxy-user":
			d.proxyUser = args[i+1]
		case "--class":
			d.mainClass = args[i+1]
		case "--properties-file":
		default:
			return d, fmt.Errorf("unexpected option %s", args[i])
		}
		i += 2
	}
	if i >= len(args) {
		return d, fmt.Errorf("no main application resource")
	}
	d.resource, d.appArgs = args[i], append([]string(nil), args[i+1:]...)
	return d, nil
}

func kfSparkContainer(t *testing.T, pod *corev1.Pod) *corev1.Container {
	t.Helper()
	if pod == nil || len(pod.Spec.Containers) == 0 {
		t.Fatal("no driver Pod or no container")
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == "spark-kubernetes-driver" {
			return &pod.Spec.Containers[i]
		}
	}
	return &pod.Spec.Containers[0]
}

// kfMountedInDriver reports whether file is in a directory the driver container mounts from a
// volume of our ConfigMap.
func kfMountedInDriver(c *kfCase, file string) bool {
	if !path.IsAbs(file) {
		return false
	}
	pod := c.objs.DriverPod
	fromConfigMap := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == c.objs.ConfigMap.Name {
			fromConfigMap[v.Name] = true
		}
	}
	for _, ctr := range pod.Spec.Containers {
		for _, m := range ctr.VolumeMounts {
			if fromConfigMap[m.Name] && path.Dir(file) == path.Clean(m.MountPath) {
				return true
			}
		}
	}
	return false
}

// kfExecutorTemplateHasContainer reports whether the executor pod template in our ConfigMap (its
// only key besides spark.properties) has a container of that name.
func kfExecutorTemplateHasContainer(c *kfCase, name string) bool {
	for key, data := range c.objs.ConfigMap.Data {
		if key == "spark.properties" {
			continue
		}
		var pod corev1.Pod
		if err := yaml.Unmarshal([]byte(data), &pod); err != nil {
			return false
		}
		return slices.ContainsFunc(pod.Spec.Containers, func(ctr corev1.Container) bool { return ctr.Name == name })
	}
	return false
}

// kfSparkAtLeast3 reports whether the application's Spark version has pod templates.
func kfSparkAtLeast3(app *v1beta2.SparkApplication) bool {
	major, _, _ := strings.Cut(app.Spec.SparkVersion, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 3
}

func kfSortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
