#!/usr/bin/env bash
# Builds the Kubernetes the sandbox and the end-to-end suites run: the control plane
# (kube-apiserver, kube-controller-manager, kube-scheduler) and the real node's kubelet and
# kube-proxy (hack/node, docs/real-node.md) from k8s.io/kubernetes at the version this module pins,
# as one executable (cmd/kube) with a link of each name to it, and the Helm client that installs
# the chart (helm.sh/helm/v4, the release built against the same Kubernetes minor), everything
# checksummed by go.sum and the Go checksum database. One `go build` of both, with the flags the
# Makefile builds the operator and the sandbox with: the packages they share are compiled once and
# the two links overlap. It depends on nothing in the checkout but this module, so it is kept per
# user, not per clone: ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/kube/<version>-<key>/,
# built again only when missing. Prints the directory.
set -euo pipefail
cd "$(dirname "$0")"

version=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2 }' go.mod)
helm_version=$(awk '$1 == "helm.sh/helm/v4" { print $2 }' go.mod)
key=$(cat go.mod go.sum build.sh cmd/kube/*.go | sha256sum | cut -c1-12)
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}
out="$cache/kube/$version-$key"
commands=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)

missing=0
for c in kube helm "${commands[@]}"; do
	[ -x "$out/$c" ] || missing=1
done
if [ "$missing" = 0 ]; then
	echo "$out"
	exit 0
fi

minor=${version#v1.}
minor=${minor%%.*}
kube_version=k8s.io/component-base/version
# -X of a package an executable does not link is ignored, so both take one set of flags.
ldflags="-s -w -X $kube_version.gitVersion=$version -X $kube_version.gitMajor=1 -X $kube_version.gitMinor=$minor -X $kube_version.gitTreeState=clean"
ldflags+=" -X helm.sh/helm/v4/internal/version.version=$helm_version"
echo "building ${commands[*]} $version and helm $helm_version (first time only; several minutes on two cores)" >&2
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out.tmp/" ./cmd/kube helm.sh/helm/v4/cmd/helm
for c in "${commands[@]}"; do
	ln -s kube "$out.tmp/$c"
done
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
