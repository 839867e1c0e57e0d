package schedule

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// The oracle below states the invariant from the outside, on the JSON that goes over the wire,
// without the package's decoding or checkKeepsLive: Metacontroller deletes every observed child
// a 200 answer leaves out, so the answer must keep
//   - every child the schedule did not name or label (foreign), finished or not;
//   - every run that has not finished (COMPLETED, FAILED, SUBMISSION_FAILED) and is not being
//     deleted, unless the parent's concurrencyPolicy is Replace and the answer starts a new
//     run: a run it asks for that was not observed, recorded as status.lastRunName.

const oracleSparkAppKey = "SparkApplication.sparkoperator.k8s.io/v1beta2"

// oracleObject is every field the oracle reads, of the parent, the observed children and the
// desired children alike.
type oracleObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name              string            `json:"name"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
	} `json:"metadata"`
	Spec struct {
		ConcurrencyPolicy string `json:"concurrencyPolicy"`
	} `json:"spec"`
	Status struct {
		ApplicationState struct {
			State string `json:"state"`
		} `json:"applicationState"`
	} `json:"status"`
}

type oracleID struct{ key, name string }

// checkInvariant returns why resp, the answer to the request whose JSON is reqJSON, would make
// Metacontroller delete a child it must not, or nil.
func checkInvariant(reqJSON []byte, resp *metacontroller.SyncResponse) error {
	var req struct {
		Parent   oracleObject                          `json:"parent"`
		Children map[string]map[string]json.RawMessage `json:"children"`
	}
	if err := json.Unmarshal(reqJSON, &req); err != nil {
		return fmt.Errorf("oracle: decode request: %w", err)
	}
	respJSON, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("oracle: encode answer: %w", err)
	}
	var answer struct {
		Status struct {
			LastRunName string `json:"lastRunName"`
		} `json:"status"`
		Children []json.RawMessage `json:"children"`
	}
	if err := json.Unmarshal(respJSON, &answer); err != nil {
		return fmt.Errorf("oracle: decode answer: %w", err)
	}

	desired := map[oracleID]bool{}
	for i, raw := range answer.Children {
		var c oracleObject
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			return fmt.Errorf("desired child %d is null", i)
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("decode desired child %d: %w", i, err)
		}
		if c.Kind == "" || c.APIVersion == "" || c.Metadata.Name == "" {
			return fmt.Errorf("desired child %d lacks kind, apiVersion or name: %s", i, raw)
		}
		desired[oracleID{c.Kind + "." + c.APIVersion, c.Metadata.Name}] = true
	}

	observed := map[oracleID]oracleObject{}
	for key, group := range req.Children {
		for name, raw := range group {
			if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
				continue // nothing there for Metacontroller to delete
			}
			var c oracleObject
			if err := json.Unmarshal(raw, &c); err != nil {
				return fmt.Errorf("oracle: decode observed %s %q: %w", key, name, err)
			}
			observed[oracleID{key, name}] = c
		}
	}

	parent := req.Parent.Metadata.Name
	last := oracleID{oracleSparkAppKey, answer.Status.LastRunName}
	_, lastObserved := observed[last]
	replaces := req.Parent.Spec.ConcurrencyPolicy == "Replace" && last.name != "" && desired[last] && !lastObserved

	sum := sha256.Sum256([]byte(parent))
	hashPart := "-" + hex.EncodeToString(sum[:4]) + "-"
	for id, c := range observed {
		if desired[id] {
			continue
		}
		named := id.key == oracleSparkAppKey &&
			(c.Metadata.Labels["sparkoperator.k8s.io/scheduled-app-name"] == parent ||
				strings.HasPrefix(id.name, parent+"-") || strings.Contains(id.name, hashPart))
		if !named {
			return fmt.Errorf("the answer leaves out %s %q, which the schedule did not name or label", id.key, id.name)
		}
		switch c.Status.ApplicationState.State {
		case "COMPLETED", "FAILED", "SUBMISSION_FAILED":
			continue
		}
		if c.Metadata.DeletionTimestamp != nil || replaces {
			continue
		}
		return fmt.Errorf("the answer leaves out run %q in state %q, not being deleted, without Replace starting a run",
			id.name, c.Status.ApplicationState.State)
	}
	return nil
}

// TestCheckInvariantCanFail feeds the oracle answers that break the invariant.
func TestCheckInvariantCanFail(t *testing.T) {
	tests := []struct {
		name   string
		golden string
		edit   func(req map[string]any, resp *metacontroller.SyncResponse)
		want   string
	}{
		{
			name:   "live run left out without Replace",
			golden: "replace-deletes-active-run",
			edit:   func(req map[string]any, _ *metacontroller.SyncResponse) { reqSpec(req)["concurrencyPolicy"] = "Allow" },
			want:   `leaves out run "stream-replace-1717408800" in state "RUNNING"`,
		},
		{
			name:   "Replace that starts no run",
			golden: "replace-deletes-active-run",
			edit: func(_ map[string]any, resp *metacontroller.SyncResponse) {
				resp.Children = slices.DeleteFunc(resp.Children, func(c any) bool { return c.(*runObject).Metadata.Name == "stream-replace-1717410600" })
			},
			want: `leaves out run "stream-replace-1717408800"`,
		},
		{
			name:   "foreign child left out",
			golden: "unrecognised-child-kept",
			edit:   func(_ map[string]any, resp *metacontroller.SyncResponse) { resp.Children = nil },
			want:   `leaves out SparkApplication.sparkoperator.k8s.io/v1beta2 "debug-copy"`,
		},
		{
			name:   "finished foreign child left out",
			golden: "unrecognised-child-kept",
			edit: func(req map[string]any, resp *metacontroller.SyncResponse) {
				reqRun(req, "debug-copy")["status"] = map[string]any{"applicationState": map[string]any{"state": "COMPLETED"}}
				resp.Children = nil
			},
			want: `"debug-copy", which the schedule did not name`,
		},
		{
			name:   "null desired child",
			golden: "due-creates-run",
			edit:   func(_ map[string]any, resp *metacontroller.SyncResponse) { resp.Children = append(resp.Children, nil) },
			want:   "is null",
		},
		{
			name:   "desired child without a kind",
			golden: "unrecognised-child-kept",
			edit:   func(_ map[string]any, resp *metacontroller.SyncResponse) { resp.Children[0].(*foreignObject).Kind = "" },
			want:   "lacks kind",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, now := readGoldenRequest(t, tt.golden)
			resp, _, err := Sync(decodeSyncRequest(t, req), now, Config{})
			require.NoError(t, err)
			require.NoError(t, checkInvariant(coretest.MustJSON(t, req), resp), "the golden answer keeps every live child")
			tt.edit(req, resp)
			assert.ErrorContains(t, checkInvariant(coretest.MustJSON(t, req), resp), tt.want)
		})
	}
}

// TestCheckKeepsLive drives the production check with answers the decision would not give.
func TestCheckKeepsLive(t *testing.T) {
	tests := []struct {
		name       string
		golden     string
		edit       func(req map[string]any)
		leaveOut   string
		wantReason string
		want       string
	}{
		{name: "running run", golden: "forbid-waits-for-active-run", leaveOut: "stream-compact-1717408800",
			wantReason: refuseLiveRunDropped, want: `the answer leaves out run stream-compact-1717408800 in state "RUNNING"`},
		{name: "submitted run while pruning", golden: "history-pruning", leaveOut: "hist-1717398000",
			wantReason: refuseLiveRunDropped, want: `run hist-1717398000 in state "SUBMITTED"`},
		{name: "run in a state no one knows", golden: "invalid-time-zone-keeps-runs", leaveOut: "tz-typo-1717383600",
			edit: func(req map[string]any) {
				reqRun(req, "tz-typo-1717383600")["status"] = map[string]any{"applicationState": map[string]any{"state": "DANCING"}}
			},
			wantReason: refuseLiveRunDropped, want: `run tz-typo-1717383600 in state "DANCING"`},
		{name: "foreign running child", golden: "unrecognised-child-kept", leaveOut: "debug-copy", wantReason: refuseForeignChildDropped,
			want: `leaves out SparkApplication.sparkoperator.k8s.io/v1beta2 "debug-copy", which is not a run of ScheduledSparkApplication spark-jobs/owner`},
		{name: "foreign finished child", golden: "unrecognised-child-kept", leaveOut: "debug-copy",
			edit: func(req map[string]any) {
				reqRun(req, "debug-copy")["status"] = map[string]any{"applicationState": map[string]any{"state": "COMPLETED"}}
			},
			wantReason: refuseForeignChildDropped, want: `"debug-copy", which is not a run`},
		{name: "finished run", golden: "history-pruning", leaveOut: "hist-1717394400"},
		{name: "run being deleted", golden: "forbid-waits-for-active-run", leaveOut: "stream-compact-1717408800",
			edit: func(req map[string]any) {
				objMeta(reqRun(req, "stream-compact-1717408800"))["deletionTimestamp"] = "2024-06-03T10:30:00Z"
			}},
		{name: "Replace ends the active run", golden: "replace-deletes-active-run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, now := readGoldenRequest(t, tt.golden)
			if tt.edit != nil {
				tt.edit(m)
			}
			req := decodeSyncRequest(t, m)
			in, err := decodeRequest(req)
			require.NoError(t, err)
			d := &decider{in: in, now: now, cfg: Config{MaxResync: time.Hour}, status: in.ssa.Status, keep: slices.Clone(in.runs)}
			d.decide()
			resp := d.response()
			require.NoError(t, d.checkKeepsLive(req.Children, resp.Children), "the decision's own answer passes")

			resp.Children = slices.DeleteFunc(resp.Children, func(c any) bool {
				_, name := c.(identified).id()
				return name == tt.leaveOut
			})
			err = d.checkKeepsLive(req.Children, resp.Children)
			if tt.wantReason == "" {
				assert.NoError(t, err)
				return
			}
			var refusal *metacontroller.Refusal
			require.ErrorAs(t, err, &refusal)
			assert.Equal(t, tt.wantReason, refusal.Reason)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestSyncRefusesUnknownChildType: a child type the registration gained but the hook does not
// know would be left out of every answer, so every one of them is refused instead.
func TestSyncRefusesUnknownChildType(t *testing.T) {
	m, now := readGoldenRequest(t, "due-creates-run")
	m["children"].(map[string]any)["ConfigMap.v1"] = map[string]any{
		"hourly-report-conf": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "hourly-report-conf"}},
	}
	_, _, err := Sync(decodeSyncRequest(t, m), now, Config{})
	var refusal *metacontroller.Refusal
	require.ErrorAs(t, err, &refusal)
	assert.Equal(t, refuseForeignChildDropped, refusal.Reason)
	assert.ErrorContains(t, err, `ConfigMap.v1 "hourly-report-conf"`)
}

// TestSyncInvariantUnderMutation syncs every golden request under every single-field mutation
// in the tables below and checks each 200 answer with the oracle. Mutations Metacontroller
// could never send (a misfiled child, finalizing a parent not being deleted) must be 400s;
// nothing may be refused: the decisions are right, so the final check must stay silent.
func TestSyncInvariantUnderMutation(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(goldenDir, "*", "request.json"))
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	var total, answered int
	for _, reqPath := range dirs {
		golden := filepath.Base(filepath.Dir(reqPath))
		base, baseNow := readGoldenRequest(t, golden)
		var cases []mutatedRequest
		for _, m := range parentMutations() {
			req := deepCopyJSON(t, base)
			now := baseNow
			m.apply(req, &now)
			cases = append(cases, mutatedRequest{m.name, req, now, m.bad})
		}
		for _, name := range slices.Sorted(maps.Keys(reqRuns(base))) {
			if reqRuns(base)[name] == nil {
				continue // already a null object
			}
			for _, m := range childMutations() {
				req := deepCopyJSON(t, base)
				m.apply(reqRuns(req), name)
				cases = append(cases, mutatedRequest{name + ": " + m.name, req, baseNow, m.bad})
			}
		}
		for _, c := range cases {
			total++
			t.Run(golden+"/"+c.name, func(t *testing.T) {
				reqJSON := coretest.MustJSON(t, c.req)
				resp, _, err := Sync(decodeSyncRequest(t, c.req), c.now, Config{})
				if c.bad {
					var bad *metacontroller.RequestError
					require.ErrorAs(t, err, &bad)
					return
				}
				require.NoError(t, err)
				answered++
				require.NoError(t, checkInvariant(reqJSON, resp))
			})
		}
	}
	t.Logf("%d mutated requests, %d answered 200", total, answered)
	assert.Greater(t, total, 1000, "the tables lost their rows")
}

type mutatedRequest struct {
	name string
	req  map[string]any
	now  time.Time
	bad  bool // a 400 is the only right answer
}

type parentMutation struct {
	name  string
	apply func(req map[string]any, now *time.Time)
	bad   bool
}

func parentMutations() []parentMutation {
	set := func(field func(map[string]any) map[string]any, key string, v any) func(map[string]any, *time.Time) {
		return func(req map[string]any, _ *time.Time) {
			if v == nil {
				delete(field(req), key)
				return
			}
			field(req)[key] = v
		}
	}
	shift := func(d time.Duration) func(map[string]any, *time.Time) {
		return func(_ map[string]any, now *time.Time) { *now = now.Add(d) }
	}
	moveNextRun := func(d time.Duration) func(map[string]any, *time.Time) {
		return func(req map[string]any, now *time.Time) {
			reqStatus(req)["nextRun"] = now.Add(d).Format(time.RFC3339)
		}
	}
	parentMeta := func(req map[string]any) map[string]any { return objMeta(reqParent(req)) }
	muts := []parentMutation{
		{name: "suspend", apply: set(reqSpec, "suspend", true)},
		{name: "resume", apply: set(reqSpec, "suspend", false)},
		{name: "suspend removed", apply: set(reqSpec, "suspend", nil)},
		{name: "schedule every minute", apply: set(reqSpec, "schedule", "* * * * *")},
		{name: "schedule every second", apply: set(reqSpec, "schedule", "@every 1s")},
		{name: "schedule in Tokyo", apply: set(reqSpec, "schedule", "CRON_TZ=Asia/Tokyo 0 * * * *")},
		{name: "schedule never fires", apply: set(reqSpec, "schedule", "0 0 30 2 *")},
		{name: "schedule garbage", apply: set(reqSpec, "schedule", "every full moon")},
		{name: "schedule removed", apply: set(reqSpec, "schedule", nil)},
		{name: "time zone New York", apply: set(reqSpec, "timeZone", "America/New_York")},
		{name: "time zone Kiritimati", apply: set(reqSpec, "timeZone", "Pacific/Kiritimati")},
		{name: "time zone unknown", apply: set(reqSpec, "timeZone", "Mars/Olympus")},
		{name: "time zone Local", apply: set(reqSpec, "timeZone", "Local")},
		{name: "time zone removed", apply: set(reqSpec, "timeZone", nil)},
		{name: "starting deadline 0", apply: set(reqSpec, "startingDeadlineSeconds", int64(0))},
		{name: "starting deadline 1", apply: set(reqSpec, "startingDeadlineSeconds", int64(1))},
		{name: "starting deadline huge", apply: set(reqSpec, "startingDeadlineSeconds", int64(math.MaxInt64))},
		{name: "starting deadline -1", apply: set(reqSpec, "startingDeadlineSeconds", int64(-1))},
		{name: "starting deadline most negative", apply: set(reqSpec, "startingDeadlineSeconds", int64(math.MinInt64))},
		{name: "starting deadline removed", apply: set(reqSpec, "startingDeadlineSeconds", nil)},
		{name: "parent deleted", apply: set(parentMeta, "deletionTimestamp", "2024-01-01T00:00:00Z")},
		{name: "parent uid changed", apply: set(parentMeta, "uid", "00000000-0000-4000-8000-000000000000")},
		{name: "parent uid removed", apply: set(parentMeta, "uid", nil)},
		{name: "parent renamed", apply: set(parentMeta, "name", "renamed")},
		{name: "parent renamed to a run name", apply: func(req map[string]any, _ *time.Time) {
			if names := slices.Sorted(maps.Keys(reqRuns(req))); len(names) > 0 {
				parentMeta(req)["name"] = names[0]
			}
		}},
		{name: "parent name removed", apply: set(parentMeta, "name", nil), bad: true},
		{name: "parent apiVersion removed", apply: set(reqParent, "apiVersion", nil)},
		{name: "parent apiVersion v1beta1", apply: set(reqParent, "apiVersion", "sparkoperator.k8s.io/v1beta1"), bad: true},
		{name: "parent kind SparkApplication", apply: set(reqParent, "kind", "SparkApplication"), bad: true},
		{name: "finalizing", apply: set(reqRoot, "finalizing", true), bad: true},
		{name: "children null", apply: set(reqRoot, "children", nil)},
		{name: "run children null", apply: set(reqChildren, oracleSparkAppKey, nil)},
		{name: "null child named as the due run", apply: func(req map[string]any, now *time.Time) {
			reqChildren(req)[oracleSparkAppKey].(map[string]any)[runName(objMeta(reqParent(req))["name"].(string), now.Truncate(time.Minute))] = nil
		}},
		{name: "null foreign child", apply: func(req map[string]any, _ *time.Time) {
			reqChildren(req)[oracleSparkAppKey].(map[string]any)["ghost"] = nil
		}},
		{name: "status removed", apply: set(reqParent, "status", nil)},
		{name: "nextRun removed", apply: set(reqStatus, "nextRun", nil)},
		{name: "nextRun now", apply: moveNextRun(0)},
		{name: "nextRun a minute ago", apply: moveNextRun(-time.Minute)},
		{name: "nextRun a year ago", apply: moveNextRun(-365 * 24 * time.Hour)},
		{name: "nextRun in an hour", apply: moveNextRun(time.Hour)},
		{name: "nextRun in 1970", apply: set(reqStatus, "nextRun", "1970-01-01T00:00:00Z")},
		{name: "lastRunName removed", apply: set(reqStatus, "lastRunName", nil)},
		{name: "lastRunName another", apply: set(reqStatus, "lastRunName", "someone-else-1717405200")},
		{name: "lastRun removed", apply: set(reqStatus, "lastRun", nil)},
		{name: "scheduleState garbage", apply: set(reqStatus, "scheduleState", "Dancing")},
		{name: "now a day earlier", apply: shift(-24 * time.Hour)},
		{name: "now a second earlier", apply: shift(-time.Second)},
		{name: "now a second later", apply: shift(time.Second)},
		{name: "now 30 minutes later", apply: shift(30 * time.Minute)},
		{name: "now a day later", apply: shift(24 * time.Hour)},
		{name: "now 400 days later", apply: shift(400 * 24 * time.Hour)},
		{name: "now 60 years earlier", apply: shift(-60 * 365 * 24 * time.Hour)},
		{name: "now 250 years later", apply: shift(250 * 365 * 24 * time.Hour)},
	}
	for _, policy := range []any{"Allow", "Forbid", "Replace", "replace", "Sometimes", nil} {
		muts = append(muts, parentMutation{name: fmt.Sprintf("concurrencyPolicy %v", policy), apply: set(reqSpec, "concurrencyPolicy", policy)})
	}
	for _, field := range []string{"successfulRunHistoryLimit", "failedRunHistoryLimit"} {
		for _, limit := range []any{int64(0), int64(1), int64(math.MaxInt32), int64(-1), nil} {
			muts = append(muts, parentMutation{name: fmt.Sprintf("%s %v", field, limit), apply: set(reqSpec, field, limit)})
		}
	}
	return muts
}

type childMutation struct {
	name  string
	apply func(group map[string]any, name string)
	bad   bool
}

func childMutations() []childMutation {
	obj := func(group map[string]any, name string) map[string]any { return group[name].(map[string]any) }
	edit := func(f func(c map[string]any)) func(map[string]any, string) {
		return func(group map[string]any, name string) { f(obj(group, name)) }
	}
	rename := func(newName func(string) string) func(map[string]any, string) {
		return func(group map[string]any, name string) {
			c := obj(group, name)
			delete(group, name)
			objMeta(c)["name"] = newName(name)
			group[newName(name)] = c
		}
	}
	setState := func(state any) func(map[string]any, string) {
		return edit(func(c map[string]any) {
			c["status"] = map[string]any{"applicationState": map[string]any{"state": state}}
		})
	}
	muts := []childMutation{
		{name: "labels removed", apply: edit(func(c map[string]any) { delete(objMeta(c), "labels") })},
		{name: "schedule label removed", apply: edit(func(c map[string]any) {
			if labels, ok := objMeta(c)["labels"].(map[string]any); ok {
				delete(labels, LabelScheduledAppName)
			}
		})},
		{name: "schedule label edited", apply: edit(func(c map[string]any) {
			objMeta(c)["labels"] = map[string]any{LabelScheduledAppName: "someone-else"}
		})},
		{name: "annotations removed", apply: edit(func(c map[string]any) { delete(objMeta(c), "annotations") })},
		{name: "creationTimestamp removed", apply: edit(func(c map[string]any) { delete(objMeta(c), "creationTimestamp") })},
		{name: "renamed by hand", apply: rename(func(string) string { return "adhoc-rerun" })},
		{name: "renamed with a suffix", apply: rename(func(n string) string { return n + "-retry" })},
		{name: "renamed to an earlier run", apply: rename(func(n string) string { return n[:strings.LastIndexByte(n, '-')+1] + "1" })},
		{name: "metadata.name differs from its key", apply: edit(func(c map[string]any) { objMeta(c)["name"] = "other" }), bad: true},
		{name: "metadata.name removed", apply: edit(func(c map[string]any) { delete(objMeta(c), "name") }), bad: true},
		{name: "being deleted", apply: edit(func(c map[string]any) { objMeta(c)["deletionTimestamp"] = "2024-06-03T00:00:00Z" })},
		{name: "no longer being deleted", apply: edit(func(c map[string]any) { delete(objMeta(c), "deletionTimestamp") })},
		{name: "status removed", apply: edit(func(c map[string]any) { delete(c, "status") })},
		{name: "null", apply: func(group map[string]any, name string) { group[name] = nil }},
	}
	for _, state := range []any{"", "SUBMITTED", "RUNNING", "COMPLETED", "FAILED", "SUBMISSION_FAILED", "PENDING_RERUN",
		"INVALIDATING", "SUCCEEDING", "FAILING", "SUSPENDING", "SUSPENDED", "RESUMING", "UNKNOWN", "completed", "garbage", nil} {
		muts = append(muts, childMutation{name: fmt.Sprintf("state %v", state), apply: setState(state)})
	}
	return muts
}

// readGoldenRequest is a golden request as generic JSON, and its instant.
func readGoldenRequest(t *testing.T, golden string) (map[string]any, time.Time) {
	t.Helper()
	req, now := readGoldenCase(t, filepath.Join(goldenDir, golden))
	var m map[string]any
	require.NoError(t, jsonRoundTrip(req, &m))
	return m, now
}

func reqRoot(req map[string]any) map[string]any     { return req }
func reqParent(req map[string]any) map[string]any   { return req["parent"].(map[string]any) }
func objMeta(obj map[string]any) map[string]any     { return obj["metadata"].(map[string]any) }
func reqSpec(req map[string]any) map[string]any     { return reqParent(req)["spec"].(map[string]any) }
func reqChildren(req map[string]any) map[string]any { return req["children"].(map[string]any) }

// status is the parent's status, created when absent.
func reqStatus(req map[string]any) map[string]any {
	p := reqParent(req)
	if _, ok := p["status"].(map[string]any); !ok {
		p["status"] = map[string]any{}
	}
	return p["status"].(map[string]any)
}

func reqRuns(req map[string]any) map[string]any {
	group, _ := reqChildren(req)[oracleSparkAppKey].(map[string]any)
	return group
}

func reqRun(req map[string]any, name string) map[string]any {
	return reqRuns(req)[name].(map[string]any)
}

func deepCopyJSON(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, jsonRoundTrip(m, &out))
	return out
}
