package sparkctl

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	streamhttp "k8s.io/streaming/pkg/httpstream"
)

// sparkUIPort is spark.ui.port's default, where the driver serves its UI.
const sparkUIPort = 4040

func (c *cli) forwardCmd() *cobra.Command {
	var addresses []string
	cmd := &cobra.Command{
		Use:   "forward NAME|sparkconnect/NAME [[LOCAL:]REMOTE]",
		Short: "Forward a local port to the driver's Spark UI (4040) through the API server",
		Long: `Forward a local port to a port of the application's driver pod (or Spark Connect
server) through the API server, as kubectl port-forward does, until interrupted. The
default is 4040:4040, the Spark UI; LOCAL 0 picks a free port.`,
		Args: usageArgs(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			k, name, err := parseRef(args[0], kindSparkApp, kindConnect)
			if err != nil {
				return err
			}
			spec := strconv.Itoa(sparkUIPort)
			if len(args) == 2 {
				spec = args[1]
			}
			local, remote, err := parsePorts(spec)
			if err != nil {
				return err
			}
			cl, err := c.connect()
			if err != nil {
				return err
			}
			pod, _, err := c.logTarget(cmd.Context(), cl, k, name, "")
			if err != nil {
				return err
			}
			if pod.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("pod %s is not running (%s): nothing to forward to", pod.Name, podSummary(pod))
			}
			return c.forward(cmd.Context(), cl, pod, addresses, local, remote, cmd, nil)
		},
	}
	cmd.Flags().StringSliceVar(&addresses, "address", []string{"localhost"}, "local addresses to listen on")
	return cmd
}

// parsePorts reads [LOCAL:]REMOTE.
func parsePorts(spec string) (local, remote int, err error) {
	l, r, found := strings.Cut(spec, ":")
	if !found {
		l, r = spec, spec
	}
	parse := func(s string, zeroOK bool) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 65535 || (n == 0 && !zeroOK) {
			return 0, usageErrorf("port %q in %q: want a number between 1 and 65535 ([LOCAL:]REMOTE)", s, spec)
		}
		return n, nil
	}
	if remote, err = parse(r, false); err != nil {
		return 0, 0, err
	}
	if local, err = parse(l, found); err != nil {
		return 0, 0, err
	}
	return local, remote, nil
}

// forward runs client-go's port forwarder, over WebSockets with SPDY as the fallback, as kubectl
// does, until ctx ends or the connection to the pod is lost. onReady, when given, is told the
// ports once they listen.
func (c *cli) forward(ctx context.Context, cl *Clients, pod *corev1.Pod, addresses []string, local, remote int, cmd *cobra.Command, onReady func([]portforward.ForwardedPort)) error {
	if cl.Config == nil {
		return fmt.Errorf("port forwarding needs a connection to an API server")
	}
	u, err := url.Parse(cl.Config.Host)
	if err != nil {
		return fmt.Errorf("the API server address %q: %w", cl.Config.Host, err)
	}
	if u.Scheme == "" {
		u, _ = url.Parse("https://" + cl.Config.Host)
	}
	u.Path = path.Join(u.Path, cl.Config.APIPath, "/api/v1/namespaces", pod.Namespace, "pods", pod.Name, "portforward")
	transport, upgrader, err := spdy.RoundTripperFor(cl.Config)
	if err != nil {
		return err
	}
	dialer := spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	ws, err := portforward.NewSPDYOverWebsocketDialerForStreaming(u, cl.Config)
	if err != nil {
		return err
	}
	// The streaming package's error types: the WebSocket dialer reports a refused upgrade
	// with them, and apimachinery's httpstream does not recognise it (no fallback then).
	dialer = portforward.NewFallbackDialerForStreaming(ws, dialer, func(err error) bool {
		return streamhttp.IsUpgradeFailure(err) || streamhttp.IsHTTPSProxyError(err)
	})
	stop := make(chan struct{})
	ready := make(chan struct{})
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			close(stop)
		case <-done:
		}
	}()
	fw, err := portforward.NewOnAddressesForStreaming(dialer, addresses, []string{fmt.Sprintf("%d:%d", local, remote)}, stop, ready, cmd.OutOrStdout(), cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if onReady != nil {
		go func() {
			select {
			case <-ready:
				if ports, err := fw.GetPorts(); err == nil {
					onReady(ports)
				}
			case <-done:
			}
		}()
	}
	if err := fw.ForwardPorts(); err != nil {
		return fmt.Errorf("forwarding to pod %s: %w", pod.Name, err)
	}
	return nil
}
