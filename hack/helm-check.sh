#!/usr/bin/env bash
# Lints the Helm chart and renders it with the default values and with every optional feature on
# (chart/ci/all-features-values.yaml). The rendered manifests go to the directory given as the
# first argument (default: a new temporary directory), as default.yaml and all-features.yaml, for
# the checks in deploy/deploytest:
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

for f in "$out/default.yaml" "$out/all-features.yaml"; do
  printf '%s: %s objects\n' "$f" "$(grep -c '^kind: ' "$f")"
done
