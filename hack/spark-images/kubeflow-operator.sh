#!/usr/bin/env bash
# Prepares the local stand-in for the Kubeflow Spark Operator's image
# (ghcr.io/kubeflow/spark-operator/controller:<version>), which its chart runs as the controller
# and the webhook, so that the sandbox can install Kubeflow's own chart (make run OPERATOR=kubeflow,
# docs/local.md). Like build.sh's layers it is laid over the host's root by the process kubelet.
#
#   kubeflow-operator.sh RELEASE_DIR
#
# RELEASE_DIR holds an upstream release: the spark-operator binary, entrypoint.sh and chart/
# (whose appVersion is the image's tag). The upstream image is a Spark image plus tini, the
# binary at /usr/bin/spark-operator and the entrypoint at /usr/bin/entrypoint.sh, run as the
# spark user (185); here the Spark part is build.sh's spark-4.0.1 layer (upstream uses 4.0.x),
# hard-linked, so the operator layer costs no copy of Spark. tini is Debian's static build.
#
# Output, in SPARK_IMAGES_DIR (default .cache/spark-images):
#   kubeflow-spark-operator-<version>/        the layer
#   kubeflow-spark-operator-<version>.json    its image table (the format of images.json)
# On failure the last line on standard error is `spark-images: <reason>`, as build.sh's.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${SPARK_IMAGES_DIR:-$repo/.cache/spark-images}
# The Spark layer the operator's spark-submit runs from: one build.sh pins.
spark_version=4.0.1
tini=${SPARK_IMAGES_TINI:-/usr/bin/tini-static}
image_uid=185

step() { printf '== %s\n' "$*"; }
die() {
  printf 'spark-images: %s\n' "$*" >&2
  exit 1
}

[ $# = 1 ] || die "usage: kubeflow-operator.sh RELEASE_DIR (the binary spark-operator, entrypoint.sh and chart/)"
release=$(cd "$1" && pwd) || die "no release directory $1"
for f in spark-operator entrypoint.sh chart/Chart.yaml; do
  [ -f "$release/$f" ] || die "$release has no $f: it is not a Kubeflow Spark Operator release"
done
version=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' "$release/chart/Chart.yaml")
[ -n "$version" ] || die "$release/chart/Chart.yaml names no appVersion"
[ -x "$tini" ] || die "no tini at $tini: install Debian's tini (apt-get install tini) or set SPARK_IMAGES_TINI"

# The Spark layer first (up to date in well under a second when it is there).
"$here/build.sh" "$spark_version"

name=kubeflow-spark-operator-$version
root=$out/$name stamp=$out/.stamps/$name table=$out/$name.json
spark=$out/spark-$spark_version

exec 9>"$out/.lock"
if ! flock -n 9; then
  step "waiting for another build of $out to finish"
  flock 9
fi

key=$(
  {
    printf '%s\n' "$version $spark_version $image_uid"
    cat "$out/.stamps/spark-$spark_version" "$here/kubeflow-operator.sh" "$release/entrypoint.sh"
    sha256sum "$release/spark-operator" "$tini" | cut -d' ' -f1
  } | sha256sum | cut -d' ' -f1
)
if [ -d "$root" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] && [ -f "$table" ]; then
  step "layer $name: up to date"
  exit 0
fi

tmp=$out/.$name.tmp
rm -rf "$tmp"
step "layer $name: spark-$spark_version (hard links), /usr/bin/spark-operator, tini, entrypoint.sh"
cp -al "$spark" "$tmp"
mkdir -p "$tmp/usr/bin"
install -m 0755 "$release/spark-operator" "$tmp/usr/bin/spark-operator"
install -m 0755 "$tini" "$tmp/usr/bin/tini"
install -m 0755 "$release/entrypoint.sh" "$tmp/usr/bin/entrypoint.sh"
# As the upstream Dockerfile makes them: the webhook's certificate directory and a home, the
# spark user's.
mkdir -p "$tmp/etc/k8s-webhook-server/serving-certs" "$tmp/home/spark"
if [ "$(id -u)" = 0 ]; then
  chown -R "$image_uid:$image_uid" "$tmp/etc/k8s-webhook-server" "$tmp/home/spark"
fi

# The Spark image's configuration, with the operator's entrypoint.
size=$(du -sb "$tmp" | cut -f1)
python3 - "$version" "$spark_version" "$size" "$out/images.json" <<'PY' >"$table.tmp"
import json
import sys

version, spark_version, size, spark_table = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(spark_table) as f:
    spark = json.load(f)["images"]["apache/spark:" + spark_version]
config = dict(spark, root="kubeflow-spark-operator-" + version, size=size,
              entrypoint=["/usr/bin/entrypoint.sh"], user="185")
json.dump({"images": {"ghcr.io/kubeflow/spark-operator/controller:" + version: config}},
          sys.stdout, indent=2, sort_keys=True)
sys.stdout.write("\n")
PY

rm -rf "$root"
mv "$tmp" "$root"
mv "$table.tmp" "$table"
# A new file, not a write through this one: a copy of the cache made with hard links (cp -al)
# would otherwise have its stamp changed too, and take itself for up to date.
printf '%s\n' "$key" >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
step "layer $name: ready"
