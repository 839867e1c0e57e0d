package realnode

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// removePods stops and removes every pod sandbox through the CRI, as the kubelet does for a pod
// it deletes: containerd kills the containers, tears the pod's network down through CNI and
// deletes its network namespace (a file under /run/netns, on the machine, not in the node).
// It runs after the kubelet has stopped, so nothing starts them again.
func removePods(ctx context.Context, socket string) error {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	runtime := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("listing the pods: %w", err)
	}
	var errs []error
	for _, p := range list.Items {
		if _, err := runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stopping pod %s/%s: %w", p.Metadata.GetNamespace(), p.Metadata.GetName(), err))
			continue
		}
		if _, err := runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			errs = append(errs, fmt.Errorf("removing pod %s/%s: %w", p.Metadata.GetNamespace(), p.Metadata.GetName(), err))
		}
	}
	return errors.Join(errs...)
}
