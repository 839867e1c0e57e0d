package sparkconnect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// TestServerDriverService: a new submission's server's driver Service has a name its previous one's
// never had (executors the ended server left behind look that one up, and cluster DNS caches
// that it does not exist), and a running server that a release before per-attempt names
// started, under <name>-driver-svc, keeps that Service, whose name it gives its executors.
func TestServerDriverService(t *testing.T) {
	w := newWorld(t, connectYAML)
	w.settle()
	w.serverRunning(true)
	w.addExecutors("Running", "Running")
	w.settle()
	first := coretest.DriverService(t, w.children[keyService])

	// An edit starts a server of a new submission.
	w.editSpec(func(s *v1alpha1.SparkConnectSpec) { s.Server.Memory = ptr.To("1g") })
	w.settle()
	w.serverRunning(true)
	w.settle()
	second := coretest.DriverService(t, w.children[keyService])
	assert.NotEqual(t, first, second, "the new server reuses the ended one's driver Service name")

	const legacy = "spark-connect-driver-svc"
	var children map[string]map[string]map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(string(coretest.MustJSON(t, w.children)), second, legacy)), &children))
	w.children = children
	w.settle()
	assert.Equal(t, legacy, coretest.DriverService(t, w.children[keyService]), "the running server keeps the Service it started with")
}
