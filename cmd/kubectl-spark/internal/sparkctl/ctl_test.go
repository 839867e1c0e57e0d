package sparkctl

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// TestUsageErrors: a wrong command line exits 2 with one line that says what is wrong, whether
// cobra's argument validators, its flag parsing or the root's check of the command name found it.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `error: unknown command "bogus" for "kubectl spark"`},
		{[]string{"stauts", "pi"}, `error: unknown command "stauts" for "kubectl spark" (did you mean status?)`},
		{[]string{"status"}, "error: accepts 1 arg(s), received 0"},
		{[]string{"event", "a", "b"}, "error: accepts 1 arg(s), received 2"},
		{[]string{"log"}, "error: accepts 1 arg(s), received 0"},
		{[]string{"delete"}, "error: requires at least 1 arg(s), only received 0"},
		{[]string{"list", "sparkapp", "sparkconnect"}, "error: accepts at most 1 arg(s), received 2"},
		{[]string{"create", "a", "b", "--from", "x"}, "error: accepts at most 1 arg(s), received 2"},
		{[]string{"forward", "pi", "4040", "4041"}, "error: accepts between 1 and 2 arg(s), received 3"},
		{[]string{"list", "--output"}, "error: flag needs an argument: --output"},
		{[]string{"list", "-n"}, "error: flag needs an argument: 'n' in -n"},
		{[]string{"status", "pi", "-o", "wide"}, `error: --output "wide": want json or yaml`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f := newFixture(t, sparkApp("default", "pi", v1beta2.ApplicationStateRunning))
			out, errOut, code := f.run(tc.args...)
			assert.Equal(t, ExitUsage, code, "stderr: %s", errOut)
			assert.Equal(t, tc.want+"\n", errOut)
			assert.Empty(t, out)
		})
	}
}

// TestFlagsOnlyWhereHonoured: -A and -o are declared on the commands that honour them, as
// kubectl declares its flags; elsewhere they are unknown flags, not silently ignored.
func TestFlagsOnlyWhereHonoured(t *testing.T) {
	honoured := map[string][]string{
		"all-namespaces": {"list"},
		"output":         {"event", "list", "status"},
	}
	shorthand := map[string]string{"all-namespaces": "A", "output": "o"}
	commands := map[string][]string{
		"create":  {"create", "-f", "app.yaml"},
		"delete":  {"delete", "pi"},
		"event":   {"event", "pi"},
		"forward": {"forward", "pi"},
		"list":    {"list"},
		"log":     {"log", "pi"},
		"status":  {"status", "pi"},
	}
	for flag, on := range honoured {
		for name, args := range commands {
			t.Run(name+" -"+shorthand[flag], func(t *testing.T) {
				f := newFixture(t, sparkApp("default", "pi", v1beta2.ApplicationStateRunning))
				help, _, code := f.run(name, "--help")
				require.Zero(t, code)
				value := []string{"-" + shorthand[flag]}
				if flag == "output" {
					value = append(value, "json")
				}
				_, errOut, code := f.run(append(args, value...)...)
				if slices.Contains(on, name) {
					assert.Contains(t, help, "--"+flag)
					assert.Zero(t, code, errOut)
					return
				}
				assert.NotContains(t, help, "--"+flag)
				assert.Equal(t, ExitUsage, code)
				assert.Equal(t, "error: unknown shorthand flag: '"+shorthand[flag]+"' in -"+shorthand[flag]+"\n", errOut)
			})
		}
	}
}

// TestRootWithoutCommandPrintsHelp: `kubectl spark` alone prints its help and succeeds, as
// kubectl does.
func TestRootWithoutCommandPrintsHelp(t *testing.T) {
	out, errOut, code := newFixture(t).run()
	require.Zero(t, code, errOut)
	assert.Contains(t, out, "Usage:\n  kubectl spark [flags]\n  kubectl spark [command]\n")
	assert.Contains(t, out, "forward")
}
