#!/usr/bin/env bash
# Lints the Helm chart and renders it with the default values and with every optional feature on
# (chart/ci/all-features-values.yaml), and in Kueue's own integration mode; it checks that both
# Kueue modes at once are refused. The rendered manifests go to the directory given as the first
# argument (default: a new temporary directory), as default.yaml, all-features.yaml and
# kueue-integration.yaml, for the checks in deploy/deploytest:
#
#   hack/helm-check.sh .cache/chart-rendered
#   SPARKHOOKS_RENDERED_DIR=$PWD/.cache/chart-rendered go test ./deploy/deploytest/
#
# Helm is the one the sandbox and the end-to-end suites install the chart with (hack/helm/build.sh,
# pinned, built once per user), so only Go is needed. HELM overrides the command, for example
# HELM=helm to use an installed binary.
set -euo pipefail
cd "$(dirname "$0")/.."

# Helm built from source has no Kubernetes version stamped in and assumes an old one, below the
# chart's kubeVersion; render for a current release instead.
KUBE_VERSION=${KUBE_VERSION:-1.34.0}
read -r -a helm <<<"${HELM:-$(hack/helm/build.sh)}"

out=${1:-$(mktemp -d -t sparkhooks-chart.XXXXXX)}
mkdir -p "$out"

# The rendered checks compare the chart with metacontroller/*.yaml, which assume this release
# name and namespace.
release=sparkhooks
namespace=sparkhooks
all_features=chart/ci/all-features-values.yaml

echo "== helm lint (default values)"
"${helm[@]}" lint --strict --kube-version "$KUBE_VERSION" chart/
echo "== helm lint (${all_features})"
"${helm[@]}" lint --strict --kube-version "$KUBE_VERSION" chart/ -f "$all_features"

echo "== helm template (default values) > $out/default.yaml"
"${helm[@]}" template "$release" chart/ --namespace "$namespace" --kube-version "$KUBE_VERSION" >"$out/default.yaml"
echo "== helm template (${all_features}) > $out/all-features.yaml"
"${helm[@]}" template "$release" chart/ --namespace "$namespace" --kube-version "$KUBE_VERSION" -f "$all_features" >"$out/all-features.yaml"

echo "== helm template (kueue.sparkApplicationIntegration=true) > $out/kueue-integration.yaml"
"${helm[@]}" template "$release" chart/ --namespace "$namespace" --kube-version "$KUBE_VERSION" \
  --set kueue.sparkApplicationIntegration=true >"$out/kueue-integration.yaml"

# Both Kueue modes at once must be refused, with the message that says why.
echo "== helm template (both Kueue modes) must fail"
if both=$("${helm[@]}" template "$release" chart/ --namespace "$namespace" --kube-version "$KUBE_VERSION" \
  --set metacontroller.kueue=true --set kueue.sparkApplicationIntegration=true 2>&1); then
  echo "the chart rendered with metacontroller.kueue and kueue.sparkApplicationIntegration both true" >&2
  exit 1
fi
grep -q "choose one Kueue mode" <<<"$both" || { echo "unexpected refusal: $both" >&2; exit 1; }

for f in "$out/default.yaml" "$out/all-features.yaml" "$out/kueue-integration.yaml"; do
  printf '%s: %s objects\n' "$f" "$(grep -c '^kind: ' "$f")"
done
