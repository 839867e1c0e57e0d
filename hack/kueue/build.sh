#!/usr/bin/env bash
# Builds the Kueue controller the Kueue end-to-end test runs (sandbox/e2e/kueue_test.go), in a module
# of its own (go install pkg@version), so that sparkhooks' go.mod never takes Kueue's dependency
# tree. The module comes through the Go module proxy, checksummed by the Go checksum database;
# the binary depends on nothing in the checkout, so it is kept per user, in
# ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/kueue/<version>/kueue, built again only when
# missing. Prints its path.
#
# Cost: about 5 minutes of two cores from a cold module cache (14.5 min measured niced on a shared
# 2-core machine), 160 MB; seconds when cached.
set -euo pipefail
cd "$(dirname "$0")/../.."

version=${KUEUE_VERSION:-v0.19.2} # keep in step with kueueVersion in sandbox/e2e/kueue_test.go
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}
out="$cache/kueue/$version"
if [ -x "$out/kueue" ]; then
	echo "$out/kueue"
	exit 0
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Outside this module: go install with a version builds the published module as it is.
(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod GOBIN="$out" go install "sigs.k8s.io/kueue/cmd/kueue@$version")
echo "$out/kueue"
