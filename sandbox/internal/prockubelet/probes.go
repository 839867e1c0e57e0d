package prockubelet

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// probe runs the container's startup, readiness and liveness probes for as long as ctx lasts
// (the life of one process): startup first, then readiness into the Ready flag and liveness
// into a restart.
func (r *podRunner) probe(ctx context.Context, c corev1.Container, p *process) {
	if c.StartupProbe != nil {
		if !r.waitProbe(ctx, c.StartupProbe, c, p, "Startup") {
			return
		}
		r.setContainerFlags(c.Name, func(s *corev1.ContainerStatus) {
			started := true
			s.Started = &started
			if c.ReadinessProbe == nil {
				s.Ready = true
			}
		})
	}
	if c.ReadinessProbe != nil {
		go r.readiness(ctx, c, p)
	}
	if c.LivenessProbe != nil {
		if !r.waitProbe(ctx, c.LivenessProbe, c, p, "Liveness") {
			return
		}
	}
}

// waitProbe runs a startup or liveness probe. For a startup probe it returns true at the first
// success; for liveness it runs until ctx ends. Reaching the failure threshold kills the
// container (the restart policy decides what follows) and returns false.
func (r *podRunner) waitProbe(ctx context.Context, probe *corev1.Probe, c corev1.Container, p *process, kind string) bool {
	period, failureThreshold := probePeriod(probe), probeFailureThreshold(probe)
	if !sleepCtx(ctx, time.Duration(probe.InitialDelaySeconds)*time.Second) {
		return false
	}
	failures := 0
	for {
		err := r.runProbe(ctx, probe, c, p)
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			failures = 0
			if kind == "Startup" {
				return true
			}
		} else {
			failures++
			r.k.event(ctx, r.current(), corev1.EventTypeWarning, "Unhealthy", fmt.Sprintf("%s probe failed: %v", kind, err))
			if failures >= failureThreshold {
				r.k.event(ctx, r.current(), corev1.EventTypeNormal, "Killing",
					fmt.Sprintf("Container %s failed %s probe, will be restarted", c.Name, kind))
				p.stop(terminationGrace(r.current()))
				return false
			}
		}
		if !sleepCtx(ctx, period) {
			return false
		}
	}
}

func (r *podRunner) readiness(ctx context.Context, c corev1.Container, p *process) {
	probe := c.ReadinessProbe
	period, failureThreshold := probePeriod(probe), probeFailureThreshold(probe)
	successThreshold := int(max(probe.SuccessThreshold, 1))
	if !sleepCtx(ctx, time.Duration(probe.InitialDelaySeconds)*time.Second) {
		return
	}
	successes, failures := 0, 0
	for {
		if r.started(c.Name) {
			err := r.runProbe(ctx, probe, c, p)
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				successes, failures = successes+1, 0
				if successes >= successThreshold {
					r.setContainerFlags(c.Name, func(s *corev1.ContainerStatus) { s.Ready = true })
				}
			} else {
				successes, failures = 0, failures+1
				if failures >= failureThreshold {
					r.setContainerFlags(c.Name, func(s *corev1.ContainerStatus) { s.Ready = false })
				}
			}
		}
		if !sleepCtx(ctx, period) {
			return
		}
	}
}

func (r *podRunner) started(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.statusOf(name)
	return s != nil && s.Started != nil && *s.Started
}

// setContainerFlags changes a running container's status and reports it if it changed.
func (r *podRunner) setContainerFlags(name string, change func(*corev1.ContainerStatus)) {
	r.mu.Lock()
	s := r.statusOf(name)
	if s == nil || s.State.Running == nil {
		r.mu.Unlock()
		return
	}
	before := s.DeepCopy()
	change(s)
	changed := before.Ready != s.Ready || (before.Started == nil) != (s.Started == nil) || (before.Started != nil && *before.Started != *s.Started)
	r.mu.Unlock()
	if changed {
		r.markDirty()
	}
}

// runProbe runs one probe: exec inside the container's namespaces, TCP and HTTP against the pod's
// address from the node, as the kubelet probes.
func (r *podRunner) runProbe(ctx context.Context, probe *corev1.Probe, c corev1.Container, p *process) error {
	timeout := time.Duration(max(probe.TimeoutSeconds, 1)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.mu.Lock()
	podIP := ""
	if r.net != nil {
		podIP = r.net.IP.String()
	}
	r.mu.Unlock()
	switch {
	case probe.Exec != nil:
		// Every namespace of the container, its PID namespace too, as a runtime's exec joins
		// them: the container's /proc belongs to that namespace, and outside it /proc/self,
		// and so /proc/net, do not resolve.
		args := append([]string{"--target", strconv.Itoa(p.pid()), "--mount", "--uts", "--net", "--pid", "--root", "--wd",
			"--setuid", strconv.Itoa(int(p.uid)), "--setgid", strconv.Itoa(int(p.gid)), "--"}, probe.Exec.Command...)
		out, err := exec.CommandContext(ctx, "nsenter", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("command %q: %v: %s", probe.Exec.Command, err, out)
		}
		return nil
	case probe.TCPSocket != nil:
		port, err := probePort(probe.TCPSocket.Port, c)
		if err != nil {
			return err
		}
		host := probe.TCPSocket.Host
		if host == "" {
			host = podIP
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	case probe.HTTPGet != nil:
		get := probe.HTTPGet
		port, err := probePort(get.Port, c)
		if err != nil {
			return err
		}
		host := get.Host
		if host == "" {
			host = podIP
		}
		scheme := "http"
		if get.Scheme == corev1.URISchemeHTTPS {
			scheme = "https"
		}
		url := fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), get.Path)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header.Set("User-Agent", "kube-probe/1.36")
		for _, h := range get.HTTPHeaders {
			req.Header.Set(h.Name, h.Value)
		}
		client := &http.Client{
			Transport:     &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // kubelet probes do not verify
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
		}
		return nil
	}
	return fmt.Errorf("unsupported probe handler (this kubelet runs exec, tcpSocket and httpGet probes)")
}

// probePort resolves a probe's port, a number or the name of a container port.
func probePort(port intstr.IntOrString, c corev1.Container) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(port.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, port.StrVal)
}

func probePeriod(p *corev1.Probe) time.Duration {
	if p.PeriodSeconds > 0 {
		return time.Duration(p.PeriodSeconds) * time.Second
	}
	return 10 * time.Second
}

func probeFailureThreshold(p *corev1.Probe) int {
	if p.FailureThreshold > 0 {
		return int(p.FailureThreshold)
	}
	return 3
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
