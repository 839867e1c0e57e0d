#!/usr/bin/env bash
# Builds golangci-lint, the linter make lint runs (.golangci.yml), in a module of its own
# (go install pkg@version), so that sparkhooks' go.mod never takes the linter's dependency tree.
# The module comes through the Go module proxy, checksummed by the Go checksum database; the binary
# depends on nothing in the checkout, so it is kept per user, in
# ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/golangci-lint/<version>/golangci-lint, built again
# only when missing. Prints its path.
set -euo pipefail

version=${GOLANGCI_LINT_VERSION:-v2.15.0}
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}
out="$cache/golangci-lint/$version"
if [ -x "$out/golangci-lint" ]; then
	echo "$out/golangci-lint"
	exit 0
fi
echo "building golangci-lint $version (first time only; a few minutes on two cores)" >&2
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Outside this module: go install with a version builds the published module as it is.
(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod GOBIN="$out" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version")
echo "$out/golangci-lint"
