#!/usr/bin/env bash
# Builds the Helm client the sandbox and the end-to-end suites install the chart with, as a user
# does (helm install). go install pkg@version builds the published module as it is, outside this
# module, checksummed by the Go checksum database. The binary depends on nothing in the checkout,
# so it is kept per user, not per clone: ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/helm/<version>/helm,
# built again only when missing. Prints its path.
set -euo pipefail

version=${HELM_VERSION:-v4.3.1}
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}
out="$cache/helm/$version"
if [ ! -x "$out/helm" ]; then
	echo "building helm $version (first time only; about two minutes on two cores)" >&2
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	major=${version%%.*}
	(cd "${TMPDIR:-/tmp}" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$out" \
		go install -trimpath -ldflags "-s -w -X helm.sh/helm/$major/internal/version.version=$version" "helm.sh/helm/$major/cmd/helm@$version")
fi
echo "$out/helm"
