#!/usr/bin/env bash
# Builds Kyverno Chainsaw, which runs the Apache Spark Kubernetes Operator's own e2e suite
# (make e2e-apache), in a module of its own (go install pkg@version), so that sparkhooks' go.mod
# never takes its dependency tree. The module comes through the Go module proxy, checksummed by
# the Go checksum database; the binary depends on nothing in the checkout, so it is kept per
# user, in ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/chainsaw/<version>/chainsaw, built
# again only when missing. Prints its path.
set -euo pipefail

version=${CHAINSAW_VERSION:-v0.2.12}
# chainsaw runs its tests through testing.MainStart with a testDeps of its own, which lacks the
# ModulePath method Go 1.25 added: it builds with Go 1.24 (a Go module too, checksummed the same).
toolchain=${CHAINSAW_GO:-go1.24.6}
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}
out="$cache/chainsaw/$version"
if [ -x "$out/chainsaw" ]; then
	echo "$out/chainsaw"
	exit 0
fi
echo "building chainsaw $version with $toolchain (first time only; a few minutes on two cores)" >&2
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Outside this module: go install with a version builds the published module as it is.
(cd "${TMPDIR:-/tmp}" && GOTOOLCHAIN=$toolchain GOFLAGS=-mod=mod GOBIN="$out" go install "github.com/kyverno/chainsaw@$version")
echo "$out/chainsaw"
