#!/usr/bin/env bash
# Copies the generated CRDs (crds/, written by `make generate`) into the chart, which must ship
# the same files but one; deploy/deploytest fails when the two directories differ otherwise.
# Apache's SparkApplication (spark.apache.org_sparkapplications.yaml) is opt-in: installed beside
# Kubeflow's, it takes the bare name `kubectl get sparkapp` (docs/apache.md), so the chart leaves it
# to the admin who wants it.
set -euo pipefail
cd "$(dirname "$0")/.."

shopt -s nullglob
src=()
for f in crds/*.yaml; do
  [ "$f" = crds/spark.apache.org_sparkapplications.yaml ] || src+=("$f")
done
if [ ${#src[@]} -eq 0 ]; then
  echo "no CRDs in crds/; run make generate first" >&2
  exit 1
fi
mkdir -p chart/crds
rm -f chart/crds/*.yaml
cp "${src[@]}" chart/crds/
printf 'chart/crds/%s\n' "${src[@]#crds/}"
