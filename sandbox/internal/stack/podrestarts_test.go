package stack

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestPodRestarts(t *testing.T) {
	pod := func(uid string, statuses ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "sparkhooks-abc", Namespace: "sparkhooks", UID: types.UID(uid)},
			Status:     corev1.PodStatus{ContainerStatuses: statuses},
		}
	}
	running := func(restarts int32) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "sparkhooks", RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	restarted := func(restarts int32, last corev1.ContainerStateTerminated, waiting *corev1.ContainerStateWaiting) corev1.ContainerStatus {
		s := corev1.ContainerStatus{Name: "sparkhooks", RestartCount: restarts, LastTerminationState: corev1.ContainerState{Terminated: &last}}
		if waiting != nil {
			s.State.Waiting = waiting
		} else {
			s.State.Running = &corev1.ContainerStateRunning{}
		}
		return s
	}
	killed := corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9}
	crashed := corev1.ContainerStateTerminated{ExitCode: 2}
	backOff := &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 10s restarting failed container=sparkhooks pod=sparkhooks-abc_sparkhooks(uid)"}
	for _, tc := range []struct {
		name     string
		old, cur *corev1.Pod
		want     []string
	}{
		{"nothing changed", pod("1", running(0)), pod("1", running(0)), nil},
		{"killed and restarted", pod("1", running(0)), pod("1", restarted(1, killed, nil)),
			[]string{"container sparkhooks of Pod sparkhooks/sparkhooks-abc exited (signal: killed); the kubelet restarted it (restart 1)"}},
		{"crashed into back-off", pod("1", restarted(1, killed, nil)), pod("1", restarted(2, crashed, backOff)), []string{
			"container sparkhooks of Pod sparkhooks/sparkhooks-abc exited (exit status 2); the kubelet restarted it (restart 2)",
			"container sparkhooks of Pod sparkhooks/sparkhooks-abc keeps failing: CrashLoopBackOff, back-off 10s (kubectl -n sparkhooks describe pod sparkhooks-abc)",
		}},
		{"still backing off is no news", pod("1", restarted(2, crashed, backOff)), pod("1", restarted(2, crashed, backOff)), nil},
		{"a new Pod of the same name is not a restart", pod("1", running(0)), pod("2", restarted(3, killed, nil)), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range podRestarts(tc.old, tc.cur) {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}
