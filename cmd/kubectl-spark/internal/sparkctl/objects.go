package sparkctl

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// get reads one object; a missing one is a one-line error naming it.
func get(ctx context.Context, cl *Clients, k kind, namespace, name string) (*unstructured.Unstructured, error) {
	obj, err := cl.Dynamic.Resource(k.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, notFoundError(k, namespace, name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", k.Kind, namespace, name, err)
	}
	return obj, nil
}

// typed converts an object read with the dynamic client into its Go type.
func typed[T any](obj *unstructured.Unstructured) (*T, error) {
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &out); err != nil {
		return nil, fmt.Errorf("decoding %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return &out, nil
}

func getSparkApp(ctx context.Context, cl *Clients, namespace, name string) (*v1beta2.SparkApplication, error) {
	obj, err := get(ctx, cl, kindSparkApp, namespace, name)
	if err != nil {
		return nil, err
	}
	return typed[v1beta2.SparkApplication](obj)
}

func getScheduled(ctx context.Context, cl *Clients, namespace, name string) (*v1beta2.ScheduledSparkApplication, error) {
	obj, err := get(ctx, cl, kindScheduled, namespace, name)
	if err != nil {
		return nil, err
	}
	return typed[v1beta2.ScheduledSparkApplication](obj)
}

func getConnect(ctx context.Context, cl *Clients, namespace, name string) (*v1alpha1.SparkConnect, error) {
	obj, err := get(ctx, cl, kindConnect, namespace, name)
	if err != nil {
		return nil, err
	}
	return typed[v1alpha1.SparkConnect](obj)
}

// toUnstructured converts a typed object for the dynamic client.
func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// driverPodName is the name of the application's driver Pod, as the hook names it.
func driverPodName(app *v1beta2.SparkApplication) string {
	if app.Status.DriverInfo.PodName != "" {
		return app.Status.DriverInfo.PodName
	}
	if app.Spec.Driver.PodName != nil && *app.Spec.Driver.PodName != "" {
		return *app.Spec.Driver.PodName
	}
	if name := app.Spec.SparkConf["spark.kubernetes.driver.pod.name"]; name != "" {
		return name
	}
	return app.Name + "-driver"
}

func terminal(s v1beta2.ApplicationStateType) bool {
	switch s {
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission:
		return true
	}
	return false
}
