package stack

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// etcd is the cluster's store: a single-member etcd embedded in this process, on loopback, so
// that the sandbox needs no etcd binary built or fetched.
type etcd struct {
	server    *embed.Etcd
	clientURL string
}

// startEtcd starts etcd with its data in dir. Ports are picked free just before the start; a
// port taken in between makes the start fail, so it is retried a few times with new ports.
func startEtcd(dir string) (*etcd, error) {
	var lastErr error
	for attempt := range 3 {
		e, err := startEtcdOnce(fmt.Sprintf("%s/etcd-%d", dir, attempt))
		if err == nil {
			return e, nil
		}
		lastErr = err
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, fmt.Errorf("starting embedded etcd: %w", lastErr)
}

func startEtcdOnce(dir string) (*etcd, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ports, err := freeLoopbackPorts(2)
	if err != nil {
		return nil, err
	}
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))}

	cfg := embed.NewConfig()
	cfg.Dir = dir
	// A test cluster is thrown away after the run: fsync buys nothing and costs seconds.
	cfg.UnsafeNoFsync = true
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ListenMetricsUrls = nil
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-server.Server.ReadyNotify():
	case err := <-server.Err():
		server.Close()
		return nil, fmt.Errorf("etcd stopped while starting: %w", err)
	case <-time.After(30 * time.Second):
		server.Close()
		return nil, errors.New("etcd did not become ready within 30s")
	}
	return &etcd{server: server, clientURL: clientURL.String()}, nil
}

// failed delivers why etcd stopped serving while it ran.
func (e *etcd) failed() <-chan error { return e.server.Err() }

// stop shuts etcd down and waits for it.
func (e *etcd) stop() {
	e.server.Close()
}

// freeLoopbackPorts asks the kernel for n free ports on 127.0.0.1. They are released before
// returning, so a caller that binds them later may lose a race; callers retry on that.
func freeLoopbackPorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
