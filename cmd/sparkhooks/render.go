package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/sparkhooks/sparkhooks/internal/apacheapp"
	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/children"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/schedule"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
	"github.com/sparkhooks/sparkhooks/internal/sparkcluster"
	"github.com/sparkhooks/sparkhooks/internal/sparkconnect"
)

type renderOptions struct {
	file      string
	output    string
	now       string
	decisions decisionOptions
	// volcanoPodGroups renders as if the controller registration declared Volcano PodGroups
	// as children (chart value metacontroller.volcanoPodGroups, or metacontroller/volcano/).
	volcanoPodGroups bool
	// schedulerPluginsPodGroups is the same for scheduler-plugins PodGroups (chart value
	// metacontroller.schedulerPluginsPodGroups, or metacontroller/scheduler-plugins/).
	schedulerPluginsPodGroups bool
	// gatewayAPI renders as if the registrations declared HTTPRoutes and GRPCRoutes (chart
	// value gatewayAPI.enabled, or metacontroller/gateway/).
	gatewayAPI bool
}

// render prints what the sync hook would answer for each SparkApplication in a file, as if it
// had just been created: the dry run that answers "what will this create?".
func render(args []string, stdout, stderr io.Writer) error {
	var o renderOptions
	f := newEnvFlags("render")
	f.fs.SetOutput(stderr)
	f.string(&o.file, "f", "SPARKHOOKS_RENDER_FILE", "", "SparkApplication YAML or JSON file (- for stdin)")
	f.string(&o.output, "o", "SPARKHOOKS_RENDER_OUTPUT", "yaml", "output format: yaml or json")
	f.string(&o.now, "now", "SPARKHOOKS_RENDER_NOW", "", "the sync's clock, RFC 3339 (default: the current time)")
	f.boolean(&o.volcanoPodGroups, "volcano-podgroups", "SPARKHOOKS_RENDER_VOLCANO_PODGROUPS", false,
		"render as a controller registration that manages Volcano PodGroups would (chart value metacontroller.volcanoPodGroups)")
	f.boolean(&o.schedulerPluginsPodGroups, "scheduler-plugins-podgroups", "SPARKHOOKS_RENDER_SCHEDULER_PLUGINS_PODGROUPS", false,
		"render as a controller registration that manages scheduler-plugins PodGroups would (chart value metacontroller.schedulerPluginsPodGroups), for the schedulers of --kube-scheduler-names")
	f.boolean(&o.gatewayAPI, "gateway-api", "SPARKHOOKS_RENDER_GATEWAY_API", false,
		"render as controller registrations that manage Gateway API HTTPRoutes and GRPCRoutes would (chart value gatewayAPI.enabled)")
	addDecisionFlags(f, &o.decisions)
	if err := f.parse(args); err != nil {
		return err
	}
	if o.file == "" {
		return errors.New("render needs -f <file>")
	}
	if o.output != "yaml" && o.output != "json" {
		return fmt.Errorf("-o must be yaml or json, got %q", o.output)
	}
	if err := o.decisions.validate(); err != nil {
		return err
	}
	if err := o.decisions.resolve(); err != nil {
		return err
	}
	now := time.Now()
	if o.now != "" {
		t, err := time.Parse(time.RFC3339, o.now)
		if err != nil {
			return fmt.Errorf("-now: %w", err)
		}
		now = t
	}
	data, err := readInput(o.file)
	if err != nil {
		return err
	}
	docs, err := splitDocuments(data)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	if len(docs) == 0 {
		return fmt.Errorf("%s: no SparkApplication found", o.file)
	}
	for i, doc := range docs {
		resp, err := renderOne(doc, now, o)
		if err != nil {
			return fmt.Errorf("%s: %w", o.file, err)
		}
		if err := writeResponse(stdout, resp, o.output, i > 0); err != nil {
			return err
		}
	}
	return nil
}

func readInput(file string) ([]byte, error) {
	if file == "-" {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, fmt.Errorf("read stdin: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	return data, nil
}

// splitDocuments turns a YAML stream (or one JSON object) into JSON documents, skipping empty
// ones.
func splitDocuments(data []byte) ([][]byte, error) {
	var docs [][]byte
	for i, part := range bytes.Split(append([]byte("\n"), data...), []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(part))) == 0 {
			continue
		}
		doc, err := yaml.YAMLToJSON(part)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

func stripComments(b []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, t...)
		}
	}
	return out
}

// renderOne fills in what the API server would (namespace, uid, generation) and runs the sync
// hook on the object as a new parent with no children.
func renderOne(doc []byte, now time.Time, ro renderOptions) (*metacontroller.SyncResponse, error) {
	o := ro.decisions
	var obj map[string]any
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	kind, _ := obj["kind"].(string)
	switch kind {
	case v1beta2.KindSparkApplication, v1beta2.KindScheduledSparkApplication, v1alpha1.KindSparkConnect, sparkv1.KindSparkCluster:
	default:
		return nil, fmt.Errorf("render handles kinds %s, %s, %s and %s, found %q",
			v1beta2.KindSparkApplication, v1beta2.KindScheduledSparkApplication, v1alpha1.KindSparkConnect, sparkv1.KindSparkCluster, kind)
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	if ns, _ := md["namespace"].(string); ns == "" {
		md["namespace"] = "default"
	}
	name, _ := md["name"].(string)
	if name == "" {
		return nil, errors.New("metadata.name is required")
	}
	if uid, _ := md["uid"].(string); uid == "" {
		md["uid"] = renderUID(md["namespace"].(string), name)
	}
	if _, ok := md["generation"]; !ok {
		md["generation"] = 1
	}
	delete(obj, "status")
	parent, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode parent: %w", err)
	}
	switch kind {
	case v1beta2.KindScheduledSparkApplication:
		return renderScheduled(parent, name, now, o)
	case v1alpha1.KindSparkConnect:
		return renderConnect(parent, name, now, o, ro.gatewayAPI)
	case sparkv1.KindSparkCluster:
		return renderCluster(parent, name, now)
	}
	if apiVersion, _ := obj["apiVersion"].(string); apiVersion == sparkv1.GroupVersion.String() {
		return renderApache(parent, name, now, o)
	}
	req := &metacontroller.SyncRequest{
		Parent: parent,
		Children: metacontroller.ChildMap{
			"Pod.v1": {}, "ConfigMap.v1": {}, "Service.v1": {}, "Ingress.networking.k8s.io/v1": {},
		},
	}
	if ro.volcanoPodGroups {
		// A declared child type shows in every request, which is how the hook learns of it.
		req.Children["PodGroup.scheduling.volcano.sh/v1beta1"] = map[string]json.RawMessage{}
	}
	if ro.gatewayAPI {
		req.Children["HTTPRoute."+children.GatewayAPIVersion] = map[string]json.RawMessage{}
	}
	if ro.schedulerPluginsPodGroups {
		req.Children["PodGroup.scheduling.x-k8s.io/v1alpha1"] = map[string]json.RawMessage{}
	}
	resp, d, err := sparkapp.Sync(req, now, o.spark)
	if err != nil {
		return nil, err
	}
	if d.To == string(v1beta2.ApplicationStateFailedSubmission) {
		st, _ := resp.Status.(*v1beta2.SparkApplicationStatus)
		msg := "submission failed"
		if st != nil && st.AppState.ErrorMessage != "" {
			msg = st.AppState.ErrorMessage
		}
		return nil, fmt.Errorf("SparkApplication %s is invalid: %s", name, msg)
	}
	return resp, nil
}

// renderConnect shows the first sync of a SparkConnect: its server Pod, ConfigMap and Services.
func renderConnect(parent []byte, name string, now time.Time, o decisionOptions, gatewayAPI bool) (*metacontroller.SyncResponse, error) {
	req := &metacontroller.SyncRequest{
		Parent:   parent,
		Children: metacontroller.ChildMap{"Pod.v1": {}, "ConfigMap.v1": {}, "Service.v1": {}},
	}
	if gatewayAPI {
		req.Children["HTTPRoute."+children.GatewayAPIVersion] = map[string]json.RawMessage{}
		req.Children["GRPCRoute."+children.GatewayAPIVersion] = map[string]json.RawMessage{}
	}
	resp, r, err := sparkconnect.Sync(req, now, sparkconnect.Config{Driver: o.spark.Driver})
	if err != nil {
		return nil, err
	}
	if r.To == string(v1alpha1.StateFailed) {
		msg := "the server cannot be built"
		if st, ok := resp.Status.(*v1alpha1.SparkConnectStatus); ok {
			for _, c := range st.Conditions {
				if c.Type == "ServerPodReady" {
					msg = c.Message
				}
			}
		}
		return nil, fmt.Errorf("SparkConnect %s is invalid: %s", name, msg)
	}
	return resp, nil
}

// renderCluster shows the first sync of a SparkCluster: its StatefulSets, Services, policy,
// autoscaler and budget.
func renderCluster(parent []byte, name string, now time.Time) (*metacontroller.SyncResponse, error) {
	req := &metacontroller.SyncRequest{Parent: parent, Children: metacontroller.ChildMap{}}
	resp, r, err := sparkcluster.Sync(req, now)
	if err != nil {
		return nil, err
	}
	if r.ValidationFailed {
		msg := "invalid spec"
		if st, ok := resp.Status.(*sparkv1.ClusterStatus); ok {
			msg = st.CurrentState.Message
		}
		return nil, fmt.Errorf("SparkCluster %s is invalid: %s", name, msg)
	}
	return resp, nil
}

// renderApache shows the first sync of the Apache operator's SparkApplication: the same
// children as the Kubeflow API's, its first states.
func renderApache(parent []byte, name string, now time.Time, o decisionOptions) (*metacontroller.SyncResponse, error) {
	req := &metacontroller.SyncRequest{
		Parent:   parent,
		Children: metacontroller.ChildMap{"Pod.v1": {}, "ConfigMap.v1": {}, "Service.v1": {}, "Ingress.networking.k8s.io/v1": {}},
	}
	resp, r, err := apacheapp.Sync(req, now, o.spark)
	if err != nil {
		return nil, err
	}
	if r.ValidationFailed {
		msg := "invalid spec"
		if st, ok := resp.Status.(*sparkv1.ApplicationStatus); ok {
			msg = st.CurrentState.Message
		}
		return nil, fmt.Errorf("SparkApplication %s is invalid: %s", name, msg)
	}
	return resp, nil
}

// renderScheduled shows the first sync of a ScheduledSparkApplication: its next run time, and a
// run when one is due.
func renderScheduled(parent []byte, name string, now time.Time, o decisionOptions) (*metacontroller.SyncResponse, error) {
	req := &metacontroller.SyncRequest{
		Parent:   parent,
		Children: metacontroller.ChildMap{metacontroller.Key(v1beta2.KindSparkApplication, v1beta2.GroupVersion.String()): {}},
	}
	resp, r, err := schedule.Sync(req, now, o.scheduled)
	if err != nil {
		return nil, err
	}
	if r.ValidationFailed {
		msg := "invalid schedule"
		if st, ok := resp.Status.(*v1beta2.ScheduledSparkApplicationStatus); ok && st.Reason != "" {
			msg = st.Reason
		}
		return nil, fmt.Errorf("ScheduledSparkApplication %s is invalid: %s", name, msg)
	}
	return resp, nil
}

// renderUID stands in for the uid the API server would assign, stable for a namespace and
// name so that two renders of one file print the same ids.
func renderUID(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	h := hex.EncodeToString(sum[:16])
	return strings.Join([]string{h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]}, "-")
}

func writeResponse(w io.Writer, resp *metacontroller.SyncResponse, format string, separate bool) error {
	body, err := json.MarshalIndent(resp, "", "  ")
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	if format == "json" {
		_, err = fmt.Fprintf(w, "%s\n", body)
		return err
	}
	out, err := yaml.JSONToYAML(body)
	if err != nil {
		return fmt.Errorf("encode response as YAML: %w", err)
	}
	if separate {
		if _, err := io.WriteString(w, "---\n"); err != nil {
			return err
		}
	}
	_, err = w.Write(out)
	return err
}
