package sparkapp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// argoCDHealth is Argo CD's own health check for SparkApplication (testdata/argocd/README.md).
var argoCDHealth = filepath.Join("..", "..", "testdata", "argocd", "sparkapplication-health.lua")

// TestArgoCDHealthOfEveryGoldenStatus runs Argo CD's health script on the application of every
// golden sync, with the status sparkhooks answered, the way Argo CD would after the write: a
// finished application is Healthy or Degraded with the cause as the message, one whose attempt
// is active or being retried is Progressing (or Degraded while a failed attempt waits for its
// retry, as for Kubeflow), a running one with its executors up is Healthy.
func TestArgoCDHealthOfEveryGoldenStatus(t *testing.T) {
	script, err := os.ReadFile(argoCDHealth)
	require.NoError(t, err)
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "sync", "*"))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, dir := range dirs {
		var req struct {
			Parent map[string]any `json:"parent"`
		}
		var resp struct {
			Status map[string]any `json:"status"`
		}
		readJSON(t, filepath.Join(dir, "request.json"), &req)
		readJSON(t, filepath.Join(dir, "response.json"), &resp)
		if resp.Status == nil {
			continue // a refused request: nothing is written
		}
		var status v1beta2.SparkApplicationStatus
		readJSON(t, filepath.Join(dir, "response.json"), &struct {
			Status *v1beta2.SparkApplicationStatus `json:"status"`
		}{&status})
		obj := req.Parent
		obj["status"] = resp.Status
		health, msg := runHealth(t, string(script), obj)
		state := status.AppState.State
		seen[health] = true
		t.Run(filepath.Base(dir), func(t *testing.T) {
			switch state {
			case v1beta2.ApplicationStateCompleted:
				assert.Equal(t, "Healthy", health)
			case v1beta2.ApplicationStateFailed, v1beta2.ApplicationStateFailedSubmission, v1beta2.ApplicationStateFailing:
				assert.Equal(t, "Degraded", health)
				assert.Equal(t, status.AppState.ErrorMessage, msg)
				assert.NotEmpty(t, msg, "Argo CD shows errorMessage: the cause")
			case v1beta2.ApplicationStateRunning:
				assert.Contains(t, []string{"Healthy", "Progressing"}, health, msg)
				if n, ok := specExecutorInstances(obj); ok && runningExecutors(&status) == n {
					assert.Equal(t, "Healthy", health, "every executor the spec asks for runs")
				}
			case v1beta2.ApplicationStateInvalidating:
				assert.Equal(t, "Missing", health)
			default:
				assert.Equal(t, "Progressing", health, msg)
			}
		})
	}
	assert.True(t, seen["Healthy"] && seen["Degraded"] && seen["Progressing"], "the goldens cover every health: %v", seen)
}

func runningExecutors(st *v1beta2.SparkApplicationStatus) int {
	running := 0
	for _, s := range st.ExecutorState {
		if s == v1beta2.ExecutorStateRunning {
			running++
		}
	}
	return running
}

// specExecutorInstances is spec.executor.instances as written, which the script compares with.
func specExecutorInstances(obj map[string]any) (int, bool) {
	spec, _ := obj["spec"].(map[string]any)
	executor, _ := spec["executor"].(map[string]any)
	n, ok := executor["instances"].(float64)
	return int(n), ok
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

// runHealth evaluates a health script as Argo CD does: the object as the global obj, and a
// table with status and message returned.
func runHealth(t *testing.T, script string, obj map[string]any) (status, message string) {
	t.Helper()
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	L.SetGlobal("obj", toLua(L, obj))
	require.NoError(t, L.DoString(script))
	ret, ok := L.Get(-1).(*lua.LTable)
	require.True(t, ok, "the script returns a table")
	return ret.RawGetString("status").String(), lua.LVAsString(ret.RawGetString("message"))
}

// toLua converts decoded JSON as Argo CD hands objects to Lua: objects and arrays as tables.
func toLua(L *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		tbl := L.NewTable()
		for k, e := range v {
			tbl.RawSetString(k, toLua(L, e))
		}
		return tbl
	case []any:
		tbl := L.NewTable()
		for _, e := range v {
			tbl.Append(toLua(L, e))
		}
		return tbl
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case bool:
		return lua.LBool(v)
	}
	return lua.LNil
}
