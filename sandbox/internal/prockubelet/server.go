package prockubelet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
)

// The kubelet's defaults for streaming connections: an idle port-forward connection is closed
// after 4 h, and the streams of a forwarded connection must all arrive within 30 s.
const (
	streamIdleTimeout     = 4 * time.Hour
	streamCreationTimeout = 30 * time.Second
)

// KubeletAPI is the part of the kubelet API kube-apiserver calls for the pods of a node:
// /containerLogs (pods/log), /portForward (pods/portforward) and /healthz, over TLS, for
// callers with a client certificate ClientCAs verify. The process kubelet serves its pods' logs
// and ports; the simulated kubelet (sandbox/internal/simkubelet) serves what it has to say.
type KubeletAPI struct {
	// ServingCert is the TLS certificate; kube-apiserver checks it against
	// --kubelet-certificate-authority at the address it calls (the Node's InternalIP).
	ServingCert tls.Certificate
	// ClientCAs verify the callers' client certificates (kube-apiserver's
	// --kubelet-client-certificate); a request without one they verify is refused with 401.
	ClientCAs *x509.CertPool
	// Logs opens the log of a container; an *APIError is answered with its status.
	Logs func(namespace, pod, container string, opts *corev1.PodLogOptions) (ContainerLog, error)
	// PortForward serves /portForward/{namespace}/{pod}[/{uid}]; nil: the node forwards no
	// ports (404).
	PortForward http.HandlerFunc
	Logf        func(format string, args ...any)
}

// ContainerLog is an open log of a container run, positioned where the answer starts.
type ContainerLog interface {
	// WriteTo writes the log as the options it was opened with say: to its end or, following,
	// until the run ends or ctx does.
	WriteTo(ctx context.Context, w io.Writer) error
	Close() error
}

// Serve serves the API on listener until the returned server is closed; served receives why
// it stopped.
func (a KubeletAPI) Serve(listener net.Listener) (server *http.Server, served <-chan error) {
	logf := a.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	server = &http.Server{Handler: a.handler(), ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(logfWriter(logf), "kubelet API: ", 0)}
	errs := make(chan error, 1)
	go func() { errs <- server.Serve(tls.NewListener(listener, a.tlsConfig())) }()
	return server, errs
}

// tlsConfig is the kubelet API's TLS configuration. Client certificates are asked for but
// verified per request, so that a caller without a good one gets the kubelet's 401 rather
// than a failed handshake. HTTP/1.1 only: port forwarding upgrades the connection, which
// HTTP/2 cannot.
func (a KubeletAPI) tlsConfig() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{a.ServingCert},
		ClientAuth:   tls.RequestClientCert,
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}
}

func (a KubeletAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", a.serveContainerLogs)
	if a.PortForward != nil {
		for _, pattern := range []string{"/portForward/{namespace}/{pod}", "/portForward/{namespace}/{pod}/{uid}"} {
			mux.HandleFunc("GET "+pattern, a.PortForward)
			mux.HandleFunc("POST "+pattern, a.PortForward)
		}
	}
	return a.authenticate(mux)
}

// authenticate refuses, with 401, a request without a client certificate that ClientCAs
// verify for client authentication. Every such client is allowed everything: the kubelet API
// serves kube-apiserver, not users.
func (a KubeletAPI) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := verifyClient(r.TLS, a.ClientCAs); err != nil {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func verifyClient(state *tls.ConnectionState, roots *x509.CertPool) error {
	if state == nil || len(state.PeerCertificates) == 0 {
		return errors.New("no client certificate")
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	for _, c := range state.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := state.PeerCertificates[0].Verify(opts)
	return err
}

// logfWriter passes what the HTTP server logs (a client's failed TLS handshake, say) to the
// kubelet's log.
type logfWriter func(format string, args ...any)

func (f logfWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// writeError answers err as the kubelet does: its status (400 for other errors) and its
// message as plain text.
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusBadRequest
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		status = apiErr.Status
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, err.Error())
}

func (a KubeletAPI) serveContainerLogs(w http.ResponseWriter, r *http.Request) {
	opts, err := parseLogOptions(r.URL.Query())
	if err != nil {
		writeError(w, err)
		return
	}
	logs, err := a.Logs(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), opts)
	if err != nil {
		writeError(w, err)
		return
	}
	defer logs.Close()
	w.Header().Set("Content-Type", "text/plain")
	// Once the answer has started, an error can only cut it short.
	_ = logs.WriteTo(r.Context(), flushWriter{w: w, flush: http.NewResponseController(w)})
}

// flushWriter sends every write at once, so that a followed log reaches the client as the
// container writes it.
type flushWriter struct {
	w     io.Writer
	flush *http.ResponseController
}

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.flush.Flush()
	}
	return n, err
}

// servePortForward speaks the kubelet's port-forwarding protocols (SPDY, as kube-apiserver
// calls, and the older WebSocket one) with the CRI streaming server's implementation, and
// forwards each stream to the pod's address on the bridge, as a CRI runtime does inside the
// pod's network namespace.
func (k *Kubelet) servePortForward(w http.ResponseWriter, r *http.Request) {
	opts, err := portforward.NewV4Options(r)
	if err != nil {
		writeError(w, err)
		return
	}
	name := r.PathValue("pod")
	runner := k.podByName(r.PathValue("namespace"), name)
	if runner == nil {
		writeError(w, &APIError{Status: http.StatusNotFound, Message: "pod does not exist"})
		return
	}
	if uid := r.PathValue("uid"); uid != "" && uid != string(runner.uid) {
		writeError(w, &APIError{Status: http.StatusNotFound, Message: "pod not found"})
		return
	}
	portforward.ServePortForward(w, r, podPorts{runner}, name, string(runner.uid), opts, streamIdleTimeout, streamCreationTimeout, portforward.SupportedProtocols)
}

// podPorts forwards connections to the ports of one pod.
type podPorts struct{ r *podRunner }

// PortForward copies between stream and a connection to port at the pod's address until one
// side has finished and the other has had a moment to finish too, as a CRI runtime does; the
// pod sees the client's end of input as its connection's.
func (p podPorts) PortForward(ctx context.Context, _, _ string, port int32, stream io.ReadWriteCloser) error {
	p.r.mu.Lock()
	podNet := p.r.net
	p.r.mu.Unlock()
	if podNet == nil {
		return errors.New("the pod has no network: it is not running")
	}
	dialer := net.Dialer{Timeout: 10 * time.Second}
	conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(podNet.IP.String(), strconv.Itoa(int(port))))
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan error, 2)
	go func() {
		_, err := io.Copy(conn, stream)
		_ = conn.(*net.TCPConn).CloseWrite()
		done <- err
	}()
	go func() {
		_, err := io.Copy(stream, conn)
		done <- err
	}()
	err = <-done
	select {
	case second := <-done:
		if err == nil {
			err = second
		}
	case <-time.After(time.Second):
	}
	return err
}
