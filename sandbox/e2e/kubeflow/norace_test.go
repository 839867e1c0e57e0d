//go:build e2e && !race

package kubeflow

// raceEnabled reports whether the suite runs under the race detector (go test -race).
const raceEnabled = false
