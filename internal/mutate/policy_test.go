package mutate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePolicyRejects(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"empty", ``, "version must be 1, got 0"},
		{"future version", "version: 2\nrules: []", "version must be 1, got 2"},
		{"not yaml", "version: [", "parse"},
		{"unknown field", "version: 1\nrules:\n- name: a\n  guardrails: {denyPrivilegd: true}", `unknown field "denyPrivilegd"`},
		{"no name", "version: 1\nrules:\n- defaults: {schedulerName: yunikorn}", "name is required"},
		{"bad name", "version: 1\nrules:\n- name: 'no spaces'\n  defaults: {schedulerName: yunikorn}", "name:"},
		{"duplicate name", "version: 1\nrules:\n- name: a\n  defaults: {schedulerName: x}\n- name: a\n  defaults: {schedulerName: y}", `name "a" is used twice`},
		{"does nothing", "version: 1\nrules:\n- name: a\n  match: {role: driver}", "sets no defaults, enforcements or guardrails"},
		{"empty settings", "version: 1\nrules:\n- name: a\n  defaults: {}", "defaults: sets nothing"},
		{"empty guardrails", "version: 1\nrules:\n- name: a\n  guardrails: {exemptNamespaces: [x]}", "no check is enabled"},
		{"bad role", "version: 1\nrules:\n- name: a\n  match: {role: master}\n  defaults: {schedulerName: x}", "match.role must be driver, executor or any"},
		{"bad namespace", "version: 1\nrules:\n- name: a\n  match: {namespaces: [Spark_Jobs]}\n  defaults: {schedulerName: x}", "match.namespaces"},
		{"bad selector", "version: 1\nrules:\n- name: a\n  match: {selector: {matchExpressions: [{key: x, operator: Near}]}}\n  defaults: {schedulerName: x}", "match.selector"},
		{"bad scheduler", "version: 1\nrules:\n- name: a\n  enforce: {schedulerName: Yuni_Korn}", "enforce: schedulerName"},
		{"bad priority class", "version: 1\nrules:\n- name: a\n  defaults: {priorityClassName: '-x'}", "defaults: priorityClassName"},
		{"bad label key", "version: 1\nrules:\n- name: a\n  defaults: {labels: {'a b': x}}", `labels: key "a b"`},
		{"bad label value", "version: 1\nrules:\n- name: a\n  defaults: {labels: {a: 'x y'}}", `labels: a: value "x y"`},
		{"bad node selector value", "version: 1\nrules:\n- name: a\n  defaults: {nodeSelector: {a: '{{APP_ID}}'}}", `nodeSelector: a: value "{{APP_ID}}"`},
		{"bad annotation key", "version: 1\nrules:\n- name: a\n  defaults: {annotations: {'/x': y}}", `annotations: key "/x"`},
		{"unknown placeholder", "version: 1\nrules:\n- name: a\n  defaults: {labels: {a: '{{APP}}'}}", "unknown placeholder {{APP}}"},
		{"unclosed placeholder", "version: 1\nrules:\n- name: a\n  defaults: {annotations: {a: '{{APP_ID'}}", `unclosed "{{"`},
		{"stray braces", "version: 1\nrules:\n- name: a\n  defaults: {annotations: {a: 'APP_ID}}'}}", `unmatched "}}"`},
		{"bad toleration operator", "version: 1\nrules:\n- name: a\n  defaults: {tolerations: [{key: a, operator: Is}]}", "tolerations[0]: operator"},
		{"bad toleration effect", "version: 1\nrules:\n- name: a\n  defaults: {tolerations: [{key: a, operator: Exists, effect: Never}]}", "tolerations[0]: effect"},
		{"exists with value", "version: 1\nrules:\n- name: a\n  defaults: {tolerations: [{key: a, operator: Exists, value: b}]}", "value must be empty"},
		{"task group without resources", "version: 1\nrules:\n- name: a\n  defaults: {yunikorn: {taskGroups: [{name: g, minMember: 1}]}}", "taskGroups[0]: minResource is required"},
		{"task group without members", "version: 1\nrules:\n- name: a\n  defaults: {yunikorn: {taskGroups: [{name: g, minResource: {cpu: 1}}]}}", "taskGroups[0]: minMember must be positive"},
		{"task group negative", "version: 1\nrules:\n- name: a\n  defaults: {yunikorn: {taskGroups: [{name: g, minMember: 1, minResource: {cpu: -1}}]}}", "minResource cpu is negative"},
		{"task groups same name", "version: 1\nrules:\n- name: a\n  defaults: {yunikorn: {taskGroups: [{name: g, minMember: 1, minResource: {cpu: 1}}, {name: g, minMember: 1, minResource: {cpu: 1}}]}}", `taskGroups[1]: name "g" is used twice`},
		{"duplicate key", "version: 1\nversion: 1", "already set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(tt.yaml))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParsePolicyReportsEveryError(t *testing.T) {
	_, err := ParsePolicy([]byte(`
version: 1
rules:
- name: a
  match: {role: x}
  defaults: {labels: {a: 'x y'}}
- name: b
  guardrails: {}
`))
	require.Error(t, err)
	for _, want := range []string{`rules[0] ("a"): match.role`, `rules[0] ("a"): defaults: labels: a`, `rules[1] ("b"): guardrails: no check`} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestParsePolicyAccepts(t *testing.T) {
	p, err := ParsePolicy([]byte(`
version: 1
rules:
- name: yunikorn
  defaults:
    schedulerName: yunikorn
    yunikorn: {queue: "root.{{NAMESPACE}}", applicationId: true}
- name: restricted
  match: {namespaces: [spark-jobs], role: executor, selector: {matchLabels: {team: x}}}
  guardrails: {denyPrivileged: true}
`))
	require.NoError(t, err)
	assert.Equal(t, []string{"yunikorn", "restricted"}, p.RuleNames())
	assert.Nil(t, (*Policy)(nil).RuleNames())
}

func TestLoadPolicyNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	_, err := LoadPolicy(filepath.Join(dir, "missing.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist)

	path := filepath.Join(dir, "policy.yaml")
	require.NoError(t, os.WriteFile(path, []byte("version: 3\n"), 0o600))
	_, err = LoadPolicy(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"APP_ID": "spark-1", "NAMESPACE": "jobs"}
	lookup := func(name string) string { return vars[name] }
	tests := []struct {
		tmpl, want string
		ok         bool
	}{
		{"plain", "plain", true},
		{"{{APP_ID}}", "spark-1", true},
		{"root.{{NAMESPACE}}.{{APP_ID}}-pg", "root.jobs.spark-1-pg", true},
		{"{{APP_NAME}}-x", "", false},
	}
	for _, tt := range tests {
		got, ok := expand(tt.tmpl, lookup)
		assert.Equal(t, tt.ok, ok, tt.tmpl)
		assert.Equal(t, tt.want, got, tt.tmpl)
	}
}

// TestParsePolicyReservedKeys: a rule must not set the labels and annotations Spark, the sync
// hook and Metacontroller depend on, under defaults or enforce; keys that only resemble them
// are fine.
func TestParsePolicyReservedKeys(t *testing.T) {
	tests := []struct {
		settings, field, key string
		reserved             bool
	}{
		{"enforce", "labels", "spark-role", true},
		{"defaults", "labels", "spark-role", true},
		{"enforce", "labels", "spark-app-selector", true},
		{"enforce", "labels", "spark-app-name", true},
		{"enforce", "labels", "spark-exec-id", true},
		{"enforce", "labels", "spark-exec-resourceprofile-id", true},
		{"enforce", "labels", "spark-version", true},
		{"enforce", "labels", "controller-uid", true},
		{"enforce", "labels", "sparkoperator.k8s.io/app-name", true},
		{"enforce", "labels", "sparkoperator.k8s.io/submission-id", true},
		{"defaults", "labels", "sparkoperator.k8s.io/anything", true},
		{"enforce", "labels", "metacontroller.k8s.io/anything", true},
		{"enforce", "annotations", "spark-role", true},
		{"defaults", "annotations", "sparkoperator.k8s.io/pod-customization", true},
		{"enforce", "annotations", "metacontroller.k8s.io/last-applied-configuration", true},
		{"enforce", "labels", "spark-roles", false},
		{"enforce", "labels", "example.com/spark-role", false},
		{"enforce", "labels", "team.sparkoperator.k8s.io/x", false},
		{"enforce", "annotations", "sparkoperator.k8s.io.example.com/x", false},
		{"enforce", "annotations", "controller-uid-note", false},
	}
	for _, tt := range tests {
		t.Run(tt.settings+"/"+tt.field+"/"+tt.key, func(t *testing.T) {
			doc := "version: 1\nrules:\n- name: pin\n  " + tt.settings + ":\n    " + tt.field + ": {'" + tt.key + "': x}\n"
			_, err := ParsePolicy([]byte(doc))
			if !tt.reserved {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, `rules[0] ("pin"): `+tt.settings+": "+tt.field+": key "+`"`+tt.key+`"`+
				" is reserved for Spark, the sync hook and Metacontroller, which set it and depend on it", err.Error())
		})
	}
}
