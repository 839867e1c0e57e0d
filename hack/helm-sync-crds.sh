#!/usr/bin/env bash
# Copies the generated CRDs (crds/, written by `make generate`) into the chart, which must ship
# the same files; deploy/deploytest fails when the two directories differ.
set -euo pipefail
cd "$(dirname "$0")/.."

shopt -s nullglob
src=(crds/*.yaml)
if [ ${#src[@]} -eq 0 ]; then
  echo "no CRDs in crds/; run make generate first" >&2
  exit 1
fi
mkdir -p chart/crds
rm -f chart/crds/*.yaml
cp "${src[@]}" chart/crds/
printf 'chart/crds/%s\n' "${src[@]#crds/}"
