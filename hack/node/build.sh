#!/usr/bin/env bash
# Builds what the real node (sandbox/internal/realnode, docs/real-node.md) runs, once per user, and
# prints the directory that holds it all:
#
#   kubelet, kube-proxy       k8s.io/kubernetes at hack/kube's pin (hack/kube/build.sh)
#   containerd, containerd-shim-runc-v2, ctr, runc, cni/   Debian's packages (apt checks them)
#   coredns                   the cluster DNS, github.com/coredns/coredns at this module's pin
#   pause                     the sandbox ("pause") program of every pod (pause/main.go)
#   rootfs.tar                the Spark images' base layer: Debian with Java 17 and Python 3,
#                             from the machine's apt sources (mmdebstrap), reproducible
#   versions.txt              what each of them is
#
# The Debian packages are installed with apt-get when missing and this runs as root; everything
# else goes to ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/node/, each piece under a key of
# its inputs, so a second run with nothing changed only compares keys.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}/node

# The Debian packages, by the major.minor the node is made for (Kubernetes 1.36 is the last to
# support containerd 1.x; runc 1.1 and the CNI plugins 1.1 are what bookworm has).
packages=(containerd runc containernetworking-plugins iptables conntrack mmdebstrap)
declare -A want=([containerd]=1.6 [runc]=1.1 [containernetworking-plugins]=1.1)
# The Spark images' base: what the stock images (eclipse-temurin on Ubuntu) have that Spark and
# the tests use (a JRE 17, Python 3, ps for Spark's scripts, curl), on Debian's minimal base,
# without documentation.
rootfs_packages=(openjdk-17-jre-headless python3 procps netbase curl)
suite=bookworm

say() { printf 'node: %s\n' "$*" >&2; }
die() {
	say "$*"
	exit 1
}
key() { sha256sum | cut -c1-16; }

installed_version() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | awk '$3 == "installed" { print $4 }'; }

missing=()
for p in "${packages[@]}"; do
	[ -n "$(installed_version "$p")" ] || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "missing Debian packages: ${missing[*]} (sudo apt-get install ${missing[*]})"
	say "installing ${missing[*]} with apt-get"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
for p in "${!want[@]}"; do
	v=$(installed_version "$p")
	v=${v#*:}
	case $v in
		"${want[$p]}".*) ;;
		*) die "$p is $v; the node is made for ${want[$p]}.x" ;;
	esac
done

kube=$("$here/../kube/build.sh")

# CoreDNS and pause: static binaries from this module.
bin_key=$(cat "$here/go.mod" "$here/go.sum" "$here/pause/main.go" | key)
bin=$cache/bin-$bin_key
if [ ! -x "$bin/coredns" ] || [ ! -x "$bin/pause" ]; then
	say "building coredns and pause (first time only)"
	rm -rf "$bin.tmp"
	mkdir -p "$bin.tmp"
	(cd "$here" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$bin.tmp/" github.com/coredns/coredns ./pause)
	rm -rf "$bin"
	mv "$bin.tmp" "$bin"
fi

# The base layer, from the machine's own apt sources (its mirror or proxy applies).
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -s "$f" ] && sources+=("$f")
done
[ "${#sources[@]}" -gt 0 ] || die "no apt sources in /etc/apt"
rootfs_key=$({
	printf '%s\n' "$suite" "${rootfs_packages[@]}"
	cat "${sources[@]}"
	sed -n '/^# rootfs:begin/,/^# rootfs:end/p' "${BASH_SOURCE[0]}"
	cat "$here/trust-machine-cas.sh"
	cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true
} | key)
rootfs=$cache/rootfs-$rootfs_key.tar
if [ ! -s "$rootfs" ]; then
	say "building the Spark images' base layer with mmdebstrap (first time only; a few minutes)"
	# rootfs:begin
	# A fixed SOURCE_DATE_EPOCH makes the tarball, and so the layer's digest, the same on every
	# machine with the same mirror content. Without the manuals, the JRE's postinst still needs
	# man1 for its alternatives' links.
	mkdir -p "$cache"
	SOURCE_DATE_EPOCH=1735689600 mmdebstrap --quiet --variant=minbase --format=tar \
		--include="$(IFS=,; echo "${rootfs_packages[*]}")" \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
		--essential-hook='mkdir -p "$1/usr/share/man/man1"' \
		--customize-hook="$here/trust-machine-cas.sh \"\$1\"" \
		--customize-hook='chroot "$1" dpkg-query -W -f="\${Package} \${Version}\n" >'"$rootfs.packages" \
		"$suite" "$rootfs.tmp" "${sources[@]}"
	# rootfs:end
	mv "$rootfs.tmp" "$rootfs"
fi

out=$cache/$(printf '%s\n' "$kube" "$bin_key" "$rootfs_key" | key)
if [ ! -f "$out/versions.txt" ]; then
	rm -rf "$out.tmp"
	mkdir -p "$out.tmp"
	ln -s "$kube/kubelet" "$kube/kube-proxy" "$bin/coredns" "$bin/pause" "$out.tmp/"
	ln -s "$rootfs" "$out.tmp/rootfs.tar"
	ln -s /usr/lib/cni "$out.tmp/cni"
	for c in containerd containerd-shim-runc-v2 ctr runc; do
		ln -s "$(command -v "$c" || die "no $c on PATH")" "$out.tmp/$c"
	done
	{
		printf 'kubelet, kube-proxy %s\n' "$("$kube/kubelet" --version | cut -d' ' -f2)"
		for p in containerd runc containernetworking-plugins iptables; do
			printf '%s %s (Debian)\n' "$p" "$(installed_version "$p")"
		done
		printf 'coredns %s\n' "$(awk '$1 == "github.com/coredns/coredns" { print $2 }' "$here/go.mod")"
		printf 'rootfs.tar: %s, %s\n' "$suite" "$(grep -E "^($(IFS='|'; echo "${rootfs_packages[*]}")) " "$rootfs.packages" | tr '\n' ',' | sed 's/,$//; s/,/, /g')"
	} >"$out.tmp/versions.txt"
	rm -rf "$out"
	mv "$out.tmp" "$out"
fi
echo "$out"
