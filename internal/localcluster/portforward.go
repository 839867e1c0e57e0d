package localcluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/kubernetes"
)

// PortDialer connects to a port of a pod, as kube-apiserver reaches a node's kubelet for
// pods/portforward and the kubelet enters the pod's network namespace.
type PortDialer func(ctx context.Context, namespace, pod string, port int32) (net.Conn, error)

// PodIPDialer dials the pod's IP, for kubelets whose pods are reachable from this machine (the
// process kubelet's bridge). A pod that is not running has nothing to forward to.
func PodIPDialer(client kubernetes.Interface) PortDialer {
	return func(ctx context.Context, namespace, name string, port int32) (net.Conn, error) {
		pod, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		if pod.Status.Phase != corev1.PodRunning || pod.Status.PodIP == "" {
			return nil, fmt.Errorf("pod %s/%s is not running", namespace, name)
		}
		var d net.Dialer
		return d.DialContext(ctx, "tcp", net.JoinHostPort(pod.Status.PodIP, strconv.Itoa(int(port))))
	}
}

// portForwardProtocol is the SPDY port-forwarding protocol client-go speaks (port in the stream
// headers). The WebSocket tunnel kube-apiserver also offers is refused here, and clients fall
// back to SPDY as they do with older API servers.
const portForwardProtocol = "portforward.k8s.io"

// portForwardREST serves pods/portforward with the registered PortDialer.
type portForwardREST struct {
	dialer atomic.Pointer[PortDialer]
}

var _ rest.Connecter = &portForwardREST{}

func (r *portForwardREST) New() runtime.Object { return &corev1.Pod{} }
func (r *portForwardREST) Destroy()            {}

func (r *portForwardREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, false, "" }

func (r *portForwardREST) ConnectMethods() []string { return []string{http.MethodGet, http.MethodPost} }

func (r *portForwardREST) Connect(ctx context.Context, name string, _ runtime.Object, _ rest.Responder) (http.Handler, error) {
	namespace, _ := genericrequest.NamespaceFrom(ctx)
	dial := r.dialer.Load()
	if dial == nil {
		return nil, apierrors.NewBadRequest("no kubelet forwards ports in this cluster")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		servePortForward(w, req, func(ctx context.Context, port int32) (net.Conn, error) {
			return (*dial)(ctx, namespace, name, port)
		})
	}), nil
}

// servePortForward upgrades the request to SPDY and, for each pair of error and data streams
// the client opens (one pair per local connection, matched by requestID), copies between the
// data stream and a connection to the pod's port, reporting a failure on the error stream.
func servePortForward(w http.ResponseWriter, req *http.Request, dial func(context.Context, int32) (net.Conn, error)) {
	if _, err := httpstream.Handshake(req, w, []string{portForwardProtocol}); err != nil {
		return // Handshake has answered
	}
	streams := make(chan httpstream.Stream, 8)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, req, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return // the upgrader has answered
	}
	defer conn.Close()
	conn.SetIdleTimeout(time.Hour)
	type pair struct{ data, errs httpstream.Stream }
	pairs := map[string]*pair{}
	var forwards sync.WaitGroup
	defer forwards.Wait()
	for {
		select {
		case <-conn.CloseChan():
			return
		case <-req.Context().Done():
			return
		case s := <-streams:
			id := s.Headers().Get(corev1.PortForwardRequestIDHeader)
			p := pairs[id]
			if p == nil {
				p = &pair{}
				pairs[id] = p
			}
			switch s.Headers().Get(corev1.StreamType) {
			case corev1.StreamTypeData:
				p.data = s
			case corev1.StreamTypeError:
				p.errs = s
			default:
				_ = s.Reset()
				continue
			}
			if p.data == nil || p.errs == nil {
				continue
			}
			delete(pairs, id)
			forwards.Add(1)
			go func() {
				defer forwards.Done()
				defer conn.RemoveStreams(p.data, p.errs)
				forwardStream(req.Context(), p.data, p.errs, dial)
			}()
		}
	}
}

func forwardStream(ctx context.Context, data, errs httpstream.Stream, dial func(context.Context, int32) (net.Conn, error)) {
	defer errs.Close()
	defer data.Close()
	port, err := strconv.ParseInt(data.Headers().Get(corev1.PortHeader), 10, 32)
	if err != nil {
		fmt.Fprintf(errs, "invalid port %q", data.Headers().Get(corev1.PortHeader))
		return
	}
	target, err := dial(ctx, int32(port))
	if err != nil {
		fmt.Fprintf(errs, "forwarding to port %d: %v", port, err)
		return
	}
	defer target.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(data, target)
	}()
	_, _ = io.Copy(target, data)
	if tcp, ok := target.(*net.TCPConn); ok {
		_ = tcp.CloseWrite()
	}
	<-done
}
