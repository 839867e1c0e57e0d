#!/usr/bin/env bash
# Builds the Kubernetes the sandbox and the end-to-end suites run: the control plane
# (kube-apiserver, kube-controller-manager, kube-scheduler) and the real node's kubelet and
# kube-proxy (hack/node, docs/real-node.md) from k8s.io/kubernetes at the version this module pins
# (go.mod, checksummed by go.sum and the Go checksum database), as one executable (cmd/kube) with a
# link of each name to it. It depends on nothing in the checkout but this module, so it is kept per
# user, not per clone: ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/kube/<version>/, built again
# only when missing. Prints the directory.
set -euo pipefail
cd "$(dirname "$0")"

version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2 }' go.mod)
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}
out="$cache/kube/$version"
commands=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)

missing=0
for c in kube "${commands[@]}"; do
	[ -x "$out/$c" ] || missing=1
done
if [ "$missing" = 0 ]; then
	echo "$out"
	exit 0
fi

minor=${version#v1.}
minor=${minor%%.*}
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
echo "building ${commands[*]} $version (first time only; several minutes on two cores)" >&2
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out.tmp/kube" ./cmd/kube
for c in "${commands[@]}"; do
	ln -s kube "$out.tmp/$c"
done
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
