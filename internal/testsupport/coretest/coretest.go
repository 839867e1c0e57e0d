// Package coretest holds what the tests of the hooks' cores share: marshalling that fails the
// test instead of returning an error, a stand-in for Metacontroller's side of a sync (the
// observed objects sent as a request, the answered children read back), the loop that runs
// every golden request through one-field mutations, and fuzz seeding from request files (the
// webhook's fuzz test uses that too). Only tests import it.
package coretest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// MustJSON marshals v, failing the test when it cannot.
func MustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
