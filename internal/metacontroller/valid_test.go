package metacontroller

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

var validSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `-12E+2`, `true`, `false`, `null`, ` {"a" : [1, "x", {"b":null}] } `,
	`{"a":"\u00e9\n\"\\\/"}`, "\"caf\xc3\xa9\"", "\"\xff\"",
	`{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `tru`, `nul`, `"\x"`, `"\u12"`,
	"\"a\tb\"", `[1 2]`, `{"a":1 "b":2}`, `1 2`, `"abc`, `[`, ``, ` `, `[[[]]]`, `{"a":{"b":{"c":[true,false]}}}`,
	strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
}

// TestValidNeverLaxerThanEncodingJSON: every body the walk's validation takes, json.Valid takes;
// for the seeds, which are all ordinary, both agree.
func TestValidNeverLaxerThanEncodingJSON(t *testing.T) {
	for _, s := range validSeeds {
		want := json.Valid([]byte(s))
		got := validJSON([]byte(s))
		if len(s) < 1000 {
			assert.Equal(t, want, got, "%q", s)
		} else {
			assert.False(t, got && !want, "%q", s)
		}
	}
}

func FuzzValidNeverLaxer(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if validJSON(data) && !json.Valid(data) {
			t.Fatalf("valid to the walk, not to encoding/json: %q", data)
		}
	})
}

// validJSON tells, as json.Valid does, whether data is one JSON value with nothing but white
// space around it.
func validJSON(data []byte) bool {
	end := validValue(data, 0, 0)
	return end >= 0 && skipSpace(data, end) == len(data)
}
