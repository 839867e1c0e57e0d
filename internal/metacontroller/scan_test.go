package metacontroller

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestChildMapReadsAsEncodingJSON: the walk files every object under the name encoding/json
// would, with the same bytes, whatever the spacing, escapes or nesting.
func TestChildMapReadsAsEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{}`,
		`null`,
		`{"Pod.v1":{}}`,
		`{"Pod.v1":null}`,
		` { "Pod.v1" : { "a" : {"metadata":{"name":"a"}} , "b":null } , "Service.v1":{"s":{"x":[1,2,{"y":"}]\"{"}],"z":true}} } `,
		`{"Pod.v1":{"caf\u00e9":{"metadata":{"name":"café","labels":{"q":"a\\\"b"}}},"n":{"v":-1.5e3,"w":false}}}`,
		"{\"Pod.v1\":{\"t\":{\"s\":\"tab\\there\",\"arr\":[[],{},\"\"]}}}",
	} {
		t.Run(body, func(t *testing.T) {
			var want map[string]map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(body), &want))
			var got ChildMap
			require.NoError(t, json.Unmarshal([]byte(body), &got))
			assert.Equal(t, len(want), len(got))
			for key, group := range want {
				require.Contains(t, got, key)
				assert.Equal(t, group == nil, got[key] == nil, key)
				assert.Equal(t, len(group), len(got[key]), key)
				for name, raw := range group {
					assert.Equal(t, string(raw), string(got[key][name]), "%s %s", key, name)
				}
			}
		})
	}
}

// TestChildMapRefusesWhatIsNotAMap: valid JSON of another shape is an error, as with
// encoding/json, not a misreading.
func TestChildMapRefusesWhatIsNotAMap(t *testing.T) {
	for _, body := range []string{`[]`, `{"Pod.v1":[]}`, `{"Pod.v1":"x"}`, `{"Pod.v1":1}`, `"x"`} {
		var want map[string]map[string]json.RawMessage
		require.Error(t, json.Unmarshal([]byte(body), &want), body)
		var got ChildMap
		assert.Error(t, json.Unmarshal([]byte(body), &got), body)
	}
}

func TestEachFieldAndElement(t *testing.T) {
	var keys, values []string
	require.NoError(t, EachField([]byte(` {"a" :1,"b":"x,}" , "c":[{"d":2}]}`), func(k, v []byte) error {
		keys, values = append(keys, string(k)), append(values, string(v))
		return nil
	}))
	assert.Equal(t, []string{`"a"`, `"b"`, `"c"`}, keys)
	assert.Equal(t, []string{`1`, `"x,}"`, `[{"d":2}]`}, values)

	var elems []string
	require.NoError(t, EachElement([]byte(`[ 1, "a]", {"b":[2]} ,null]`), func(v []byte) error {
		elems = append(elems, string(v))
		return nil
	}))
	assert.Equal(t, []string{`1`, `"a]"`, `{"b":[2]}`, `null`}, elems)
	assert.NoError(t, EachElement([]byte(`null`), func([]byte) error { t.Fatal("no element"); return nil }))
	assert.Error(t, EachField([]byte(`[1]`), func(_, _ []byte) error { return nil }))
	assert.Error(t, EachField([]byte(`{"a":1`), func(_, _ []byte) error { return nil }))

	s, err := String([]byte(`"a\"b\u00e9"`))
	require.NoError(t, err)
	assert.Equal(t, "a\"bé", s)
	assert.True(t, Is([]byte(`"Running"`), "Running"))
	assert.True(t, Is([]byte(`"Run\u006eing"`), "Running"))
	assert.False(t, Is([]byte(`"Running "`), "Running"))
}

// TestDecodeSyncRequestAsUnmarshal: the walk decodes every body as json.Unmarshal does, and
// fails where it fails, with its error.
func TestDecodeSyncRequestAsUnmarshal(t *testing.T) {
	for _, body := range syncRequestSeeds {
		t.Run(body, func(t *testing.T) { checkDecodeSyncRequest(t, []byte(body)) })
	}
}

func FuzzDecodeSyncRequest(f *testing.F) {
	for _, body := range syncRequestSeeds {
		f.Add([]byte(body))
	}
	f.Fuzz(checkDecodeSyncRequest)
}

func checkDecodeSyncRequest(t *testing.T, body []byte) {
	var want, got SyncRequest
	wantErr := json.Unmarshal(body, &want)
	err := DecodeSyncRequest(body, &got)
	if wantErr != nil {
		require.Error(t, err)
		assert.Equal(t, wantErr.Error(), err.Error())
		return
	}
	require.NoError(t, err)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	gotJSON, err := json.Marshal(got)
	require.NoError(t, err)
	assert.Equal(t, string(wantJSON), string(gotJSON))
	assert.Equal(t, want.Children == nil, got.Children == nil)
	assert.Equal(t, want.Related == nil, got.Related == nil)
}

var syncRequestSeeds = []string{
	`{"parent":{"metadata":{"name":"a"}},"children":{"Pod.v1":{"a-driver":{"metadata":{"name":"a-driver"}}}},"finalizing":true}`,
	`{"controller":{"spec":{}},"parent":null,"children":null,"related":{"Pod.v1":{"x":{}}},"finalizing":false,"other":[1,{"a":"b"}]}`,
	`{"Parent":{"metadata":{"name":"a"}},"FINALIZING":true}`,
	`{"parent":{},"finalizing":"yes"}`,
	`{"parent":{},"children":[]}`,
	`{"parent":{},"children":{"Pod.v1":{"x":{}}}} trailing`,
	`{"parent":{}`,
	`[]`,
	`{"parent":{},"finalizing":null}`,
}

func TestSkipStringFindsTheClosingQuote(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int // index after the string, -1 when it does not end
	}{
		{`"" rest`, 2},
		{`"abc",`, 5},
		{`"a\"b"x`, 6},
		{`"a\\"x`, 5},
		{`"a\\\"b"x`, 8},
		{`"\\\\"`, 6},
		{`"unterminated`, -1},
		{`"escaped end\"`, -1},
		{`"\u00e9\n"`, 10},
	} {
		got, err := skipString([]byte(tc.in), 0)
		if tc.want < 0 {
			assert.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}
