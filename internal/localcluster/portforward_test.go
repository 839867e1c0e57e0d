package localcluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// TestServePortForward drives the pods/portforward handler with client-go's own port forwarder,
// as kubectl port-forward and kubectl spark forward do: bytes reach the pod's port and come back.
func TestServePortForward(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				fmt.Fprintf(c, "echo: %s", line)
			}()
		}
	}()
	var dialed []int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		servePortForward(w, req, func(ctx context.Context, port int32) (net.Conn, error) {
			dialed = append(dialed, port)
			var d net.Dialer
			return d.DialContext(ctx, "tcp", echo.Addr().String())
		})
	}))
	defer srv.Close()

	transport, upgrader, err := spdy.RoundTripperFor(&restclient.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL + "/api/v1/namespaces/default/pods/p/portforward")
	dialer := spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddressesForStreaming(dialer, []string{"127.0.0.1"}, []string{"0:4040"}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("ForwardPorts: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the forwarder is not ready after 10 s")
	}
	ports, err := fw.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 { // two connections over one upgraded stream
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", ports[0].Local))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "ping %d\n", i)
		got, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if want := fmt.Sprintf("echo: ping %d\n", i); err != nil || got != want {
			t.Errorf("connection %d: got %q, %v; want %q", i, got, err, want)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Errorf("ForwardPorts after stop: %v", err)
	}
	if len(dialed) != 2 || dialed[0] != 4040 {
		t.Errorf("dialed ports %v, want 4040 twice", dialed)
	}
}
