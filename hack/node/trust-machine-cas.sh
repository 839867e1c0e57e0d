#!/usr/bin/env bash
# trust-machine-cas.sh ROOTFS: the machine's own certificate authorities (those it added to
# Debian's, in /usr/local/share/ca-certificates) become trusted in the Spark images' base layer
# too, for the system and for Java. A machine whose egress passes through a proxy that re-signs
# TLS has its CA there, and pods that download (Spark's spark.jars.packages through Ivy, pip)
# would fail the handshake without it: an administrator behind such a proxy adds the CA to the
# cluster's images the same way. With no local CAs the layer keeps Debian's set, unchanged.
set -euo pipefail
rootfs=$1
shopt -s nullglob
cas=(/usr/local/share/ca-certificates/*.crt)
[ "${#cas[@]}" -gt 0 ] || exit 0
mkdir -p "$rootfs/usr/local/share/ca-certificates"
cp "${cas[@]}" "$rootfs/usr/local/share/ca-certificates/"
# Also runs ca-certificates-java's hook, which rewrites the JRE's cacerts.
chroot "$rootfs" update-ca-certificates
