package localcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// runDefaultServiceAccounts does what the service-account controller of kube-controller-manager
// does: every namespace gets a "default" ServiceAccount. Pods that name none (Spark Connect's
// executors, for one) run as it, and the kubelet cannot mount its token without it.
func runDefaultServiceAccounts(ctx context.Context, client kubernetes.Interface, logf func(string, ...any)) error {
	factory := informers.NewSharedInformerFactory(client, 0)
	namespaces := factory.Core().V1().Namespaces().Informer()
	ensure := func(obj any) {
		ns, ok := obj.(*corev1.Namespace)
		if !ok || ns.DeletionTimestamp != nil {
			return
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns.Name}}
		createCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := client.CoreV1().ServiceAccounts(ns.Name).Create(createCtx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) && logf != nil {
			logf("default service account in %s: %v", ns.Name, err)
		}
	}
	if _, err := namespaces.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: ensure}); err != nil {
		return fmt.Errorf("watching namespaces: %w", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
	return nil
}
