package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	restclient "k8s.io/client-go/rest"
)

// ceilingRuns are the ceiling's parents. The ceiling is a CompositeController whose hook makes
// one Pod per parent and copies the Pod's phase into the parent's status, registered with the
// same Metacontroller as sparkhooks'. What it costs is what Metacontroller and the API server
// cost for one Pod an application, with nothing decided: the most any operator built on them
// could do on this machine.
var ceilingRuns = schema.GroupVersionResource{Group: "bench.sparkhooks.io", Version: "v1", Resource: "ceilingruns"}

// ceilingHookArg, as the first argument, makes this binary the ceiling's hook server: a process
// of its own, so that its CPU is counted apart from the benchmark's.
const ceilingHookArg = "ceiling-hook"

// ceilingRequest is what the hook reads of Metacontroller's sync request.
type ceilingRequest struct {
	Parent struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	} `json:"parent"`
	Children map[string]map[string]struct {
		Status struct {
			Phase string `json:"phase"`
		} `json:"status"`
	} `json:"children"`
}

// ceilingSync answers one sync: the parent's one Pod, sized as the benchmark's drivers are, and
// its phase as the parent's status.
func ceilingSync(body []byte) ([]byte, error) {
	var req ceilingRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("decoding the sync request: %w", err)
	}
	name := req.Parent.Metadata.Name + "-driver"
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"restartPolicy": "Never",
			"containers": []any{map[string]any{
				"name": "driver", "image": benchImage,
				"resources": map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "64Mi"}},
			}},
		},
	}
	status := map[string]any{"phase": req.Children["Pod.v1"][name].Status.Phase}
	return json.Marshal(map[string]any{"status": status, "children": []any{pod}})
}

// serveCeiling serves the ceiling's hook at addr until the process is killed.
func serveCeiling(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sync", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			body, err = ceilingSync(body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	server := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return server.ListenAndServe()
}

// startCeiling starts the ceiling's hook server as a child process at host:<free port>, serves
// its parent kind and registers its CompositeController, calling the hook at that address as
// sparkhooks' registrations call the host-process hook server. It returns the hook's process.
func startCeiling(ctx context.Context, cfg *restclient.Config, host string) (*exec.Cmd, error) {
	listener, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	addr := listener.Addr().String()
	listener.Close()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	hook := exec.Command(self, ceilingHookArg, addr)
	hook.Stdout, hook.Stderr = os.Stderr, os.Stderr
	hook.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := hook.Start(); err != nil {
		return nil, fmt.Errorf("starting the ceiling's hook: %w", err)
	}
	if err := installCeilingCRD(ctx, cfg); err != nil {
		return hook, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return hook, err
	}
	cc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController",
		"metadata": map[string]any{"name": "bench-ceiling"},
		"spec": map[string]any{
			"generateSelector": true,
			"parentResource":   map[string]any{"apiVersion": ceilingRuns.GroupVersion().String(), "resource": ceilingRuns.Resource, "ignoreStatusChanges": true},
			"childResources":   []any{map[string]any{"apiVersion": "v1", "resource": "pods", "updateStrategy": map[string]any{"method": "OnDelete"}}},
			"hooks":            map[string]any{"sync": map[string]any{"webhook": map[string]any{"url": "http://" + addr + "/sync"}}},
		},
	}}
	ccs := schema.GroupVersionResource{Group: "metacontroller.k8s.io", Version: "v1alpha1", Resource: "compositecontrollers"}
	if _, err := dyn.Resource(ccs).Create(ctx, cc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return hook, fmt.Errorf("registering the ceiling's CompositeController: %w", err)
	}
	return hook, nil
}

func installCeilingCRD(ctx context.Context, cfg *restclient.Config) error {
	client, err := apiextensionsclientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: ceilingRuns.Resource + "." + ceilingRuns.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: ceilingRuns.Group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: ceilingRuns.Resource, Singular: "ceilingrun", Kind: "CeilingRun", ListKind: "CeilingRunList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: ceilingRuns.Version, Served: true, Storage: true,
				Schema:       &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &preserve}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("serving the ceiling's kind: %w", err)
	}
	return nil
}
