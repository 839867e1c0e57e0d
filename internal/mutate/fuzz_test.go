package mutate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sparkhooks/sparkhooks/internal/testsupport/coretest"
)

// fuzzPolicy exercises every kind of rule, so that fuzzed pods reach every code path.
const fuzzPolicy = `
version: 1
rules:
- name: guard
  guardrails: {denyPrivileged: true, denyHostPath: true, denyHostNetwork: true, allowedServiceAccounts: [spark], exemptNamespaces: [spark-admin]}
- name: yunikorn
  match: {selector: {matchExpressions: [{key: spark-version, operator: Exists}]}}
  defaults:
    schedulerName: yunikorn
    priorityClassName: spark
    labels: {team: "{{APP_NAME}}"}
    annotations: {owner: "{{NAMESPACE}}-{{ROLE}}"}
    nodeSelector: {workload: spark}
    tolerations: [{key: dedicated, operator: Equal, value: spark, effect: NoSchedule}]
    yunikorn:
      queue: "root.{{NAMESPACE}}"
      applicationId: true
      taskGroupName: "spark-{{ROLE}}"
      schedulingPolicyParameters: "gangSchedulingStyle=Hard"
      taskGroups: [{name: spark-driver, minMember: 1, minResource: {cpu: "1"}}]
- name: volcano
  match: {namespaces: [volcano-jobs], role: executor}
  enforce:
    schedulerName: volcano
    priorityClassName: spark-high
    labels: {team: fixed}
    annotations: {owner: fixed}
    nodeSelector: {workload: volcano}
    volcano: {}
`

func FuzzMutate(f *testing.F) {
	policy, err := ParsePolicy([]byte(fuzzPolicy))
	require.NoError(f, err)
	require.NotZero(f, coretest.SeedFiles(f, filepath.Join(goldenDir, "*", "review.json")))
	f.Fuzz(func(t *testing.T, body []byte) {
		out, _, err := Review(body, policy)
		checkInvariants(t, body, out, err)
	})
}

func FuzzParsePolicy(f *testing.F) {
	f.Add([]byte(fuzzPolicy))
	f.Add([]byte("version: 1\nrules: []\n"))
	paths, err := filepath.Glob(filepath.Join(goldenDir, "*", "policy.yaml"))
	require.NoError(f, err)
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			require.Nil(t, p)
			return
		}
		require.NotNil(t, p)
	})
}
