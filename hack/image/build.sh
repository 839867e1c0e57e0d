#!/usr/bin/env bash
# Builds the sparkhooks container image without a Docker engine (make image): the static binaries
# of make build over a base made of two Debian packages, as an OCI image layout in bin/image and
# the same as one tar stream in bin/image.tar; prints the image's digest. Byte for byte the same
# from the same commit on any machine: the binaries are reproducible Go builds (-trimpath), the
# packages are pinned by version and sha256, and every time in the image is SOURCE_DATE_EPOCH
# (default: the commit's time).
#
#   hack/image/build.sh [OUT]        OUT defaults to bin/image
#
# Environment: IMAGE, the reference the layout's index names (default
# ghcr.io/sparkhooks/sparkhooks:<version>); VERSION, what sparkhooks --version says (default git
# describe); SOURCE_DATE_EPOCH. The packages are downloaded with apt-get download (the machine's
# apt sources, so its mirror or proxy applies) once per user into ~/.cache/sparkhooks/image-debs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/bin/image}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks/image-debs
version=${VERSION:-$(git -C "$repo" describe --tags --always --dirty 2>/dev/null || echo dev)}
image=${IMAGE:-ghcr.io/sparkhooks/sparkhooks:$version}
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)}

# The packages of distroless's static-debian12 that the image takes files from, at Debian 12's
# versions. To move to newer ones: apt-get download them, put their versions and sha256 here.
# package          version            sha256 of the .deb
debs=(
  "ca-certificates 20230311+deb12u1 0d5f444f594e48c1e16a41d8fc628a09b24c658916a1274025c2330f2a802bed"
  "tzdata 2026b-0+deb12u1 0edb49f4dffe0d5608069f7e4ba4d69544d3b9e86fc314dd8b75e9958d8e5e98"
)

die() {
  printf 'image: %s\n' "$*" >&2
  exit 1
}

mkdir -p "$cache"
declare -A data
for entry in "${debs[@]}"; do
  read -r package pinned sum <<<"$entry"
  deb=$cache/${package}_${pinned}_all.deb
  if [ ! -f "$deb" ] || [ "$(sha256sum "$deb" | cut -d' ' -f1)" != "$sum" ]; then
    tmp=$(mktemp -d "$cache/.download.XXXXXX")
    (cd "$tmp" && apt-get download -q "$package=$pinned" >&2) ||
      die "apt-get download $package=$pinned failed (apt-get update, or a Debian 12 apt source, may be missing)"
    got=$(sha256sum "$tmp"/*.deb | cut -d' ' -f1)
    [ "$got" = "$sum" ] || die "$package $pinned: the .deb has sha256 $got, hack/image/build.sh pins $sum"
    mv "$tmp"/*.deb "$deb"
    rm -rf "$tmp"
  fi
  # The package's files as a tar stream (its data.tar.xz, which Go's library cannot read).
  if [ ! -f "$deb.tar" ] || [ "$deb.tar" -ot "$deb" ]; then
    dpkg-deb --fsys-tarfile "$deb" >"$deb.tar.tmp"
    mv "$deb.tar.tmp" "$deb.tar"
  fi
  data[$package]=$deb.tar
done

# The binaries as make build builds them, here reproducibly: no VCS stamp, no paths.
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
(
  cd "$repo"
  CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$version" -o "$bins/sparkhooks" ./cmd/sparkhooks
  CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$bins/kubectl-spark" ./cmd/kubectl-spark
)

mkdir -p "$(dirname "$out")"
cd "$here"
go run . build -sparkhooks "$bins/sparkhooks" -kubectl-spark "$bins/kubectl-spark" \
  -ca-certificates "${data[ca-certificates]}" -tzdata "${data[tzdata]}" \
  -name "$image" -arch "$(go env GOARCH)" -epoch "$epoch" -out "$out"
