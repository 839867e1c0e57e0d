#!/usr/bin/env bash
# Fetches the Gateway API CRDs (standard channel: Gateway, GatewayClass, HTTPRoute, GRPCRoute,
# ReferenceGrant...) that the end-to-end cluster serves, so that the routes sparkhooks builds meet
# the real schemas and CEL rules (sandbox/e2e/gateway_test.go). They come from the Go module
# sigs.k8s.io/gateway-api at a pinned version, through the Go module proxy (go mod download:
# checksummed by the Go checksum database), outside sparkhooks' go.mod, whose dependencies they
# would otherwise raise. Kept per user in
# ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/gateway-api/<version>/, copied again only when
# missing. Prints the directory.
#
# Cost: one module download (about 4 MB) once; nothing when cached.
set -euo pipefail
cd "$(dirname "$0")/../.."

version=${GATEWAY_API_VERSION:-v1.6.3}
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}
out="$cache/gateway-api/$version"
if [ -f "$out/.complete" ]; then
	echo "$out"
	exit 0
fi
# Outside this module: go mod download with a version fetches the published module as it is.
dir=$(cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/gateway-api@$version" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir/config/crd/standard" ]; then
	echo "hack/gateway-api/build.sh: sigs.k8s.io/gateway-api@$version has no config/crd/standard" >&2
	exit 1
fi
mkdir -p "$out"
# The CRDs only: the channel's ValidatingAdmissionPolicy (vap_safeupgrades) guards upgrades of a
# shared cluster, not a test cluster built from scratch.
for f in "$dir"/config/crd/standard/gateway.networking.k8s.io_*.yaml; do
	case "$f" in *_vap_*) continue ;; esac
	install -m 0644 "$f" "$out/"
done
touch "$out/.complete"
echo "$out"
