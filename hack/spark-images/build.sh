#!/usr/bin/env bash
# Prepares the local stand-ins for the apache/spark container images that the process kubelet
# (sandbox/internal/prockubelet) runs pods from, and the Python clients the end-to-end tests use on the
# host. See hack/spark-images/README.md. Run through `make spark-images`.
#
#   build.sh               every layer, images.json and the client venvs
#   build.sh VERSION...    only the layers of these Spark versions, and images.json: what the
#                          sandbox's kubelet runs when a pod names an image that is not here yet.
#                          Any release from 3.4.0 on: the versions pinned here (pyspark-<version>.txt)
#                          and every other one the package index serves, whose sdist pip checks
#                          against the sha256 the index lists for it (index-sha256.py)
#
# Output (SPARK_IMAGES_DIR, default .cache/spark-images):
#   spark-<version>/   a filesystem layer per Spark version, mounted over the host's root
#   images.json        the image table: image references -> layer and image configuration
#   pyclient-4.0.1/    venv with the Spark Connect Python client 4.0.1
#   kubeflow-sdk/      venv with the Kubeflow SDK (kubeflow.spark.SparkClient) and its client
#   .pip-download/     venv with the pip and setuptools that download the pyspark sdists
#   .lock              held while building: one build at a time, whoever started it
#
# Downloads go through pip, so the user's pip configuration (index, mirror, proxy) applies; they
# are pinned by sha256 (pyspark-<version>.txt, requirements-*.txt, or for another Spark version the
# index's own sha256, kept as pyspark-<version>.txt in the download cache) and kept in
# SPARK_DOWNLOADS_DIR (default: per user, ~/.cache/sparkhooks/downloads, so that every clone and a CI
# checkout share them); a file already there is reused when its checksum matches. Each layer
# and venv carries a stamp of its inputs, so a second run with nothing changed only checks the
# stamps. The wheels of requirements-build.txt are kept there too, so a venv is made again offline.
#
# On failure the last line on standard error is `spark-images: <reason>`, with the reason of a
# failed download in words (checksum mismatch, package index unreachable, no such release): the
# kubelet reports that line as the pull's error.
#
# Environment: SPARK_IMAGES_JDK (default /usr/lib/jvm/java-17-openjdk-amd64), the JDK 17 the
# layers link as /opt/java/openjdk and that compiles the examples; SPARK_IMAGES_PYTHON, the
# interpreter for the host venvs (default: /usr/bin/python3, else python3); SPARK_IMAGES_PROGRESS=raw
# has pip report a download as "Progress <bytes> of <total>" lines on standard output (for a
# program to read) instead of drawing a bar.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${SPARK_IMAGES_DIR:-$repo/.cache/spark-images}
downloads=${SPARK_DOWNLOADS_DIR:-${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}/downloads}
jdk=${SPARK_IMAGES_JDK:-/usr/lib/jvm/java-17-openjdk-amd64}

# The Spark distributions: the pyspark sdists carry a full binary distribution (deps/bin,
# sbin, jars, data, licenses), the release's python/lib zips (lib/) and the pyspark package.
# The versions make spark-images builds, each sdist pinned by its sha256 in pyspark-<version>.txt.
pinned=(3.5.3 4.0.1 4.2.0 4.3.0)
# The oldest Spark prepared on demand: 3.4 is the first to support both Java 17 and the Python 3.11
# that pods run here (the host's).
oldest=3.4.0

# The image configuration of the stock images (apache/spark-docker's Dockerfiles on
# eclipse-temurin:17-jammy, which sets JAVA_HOME, PATH, the locale and JAVA_VERSION).
image_uid=185
image_path=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

step() { printf '== %s\n' "$*"; }
die() {
  printf 'spark-images: %s\n' "$*" >&2
  exit 1
}
sha256() { sha256sum "$1" | cut -d' ' -f1; }

# ---------------------------------------------------------------------------------------------
# Prerequisites: JDK 17 and a python3 that PySpark 3.5 and 4.0 both accept.

if [ ! -x "$jdk/bin/javac" ] || [ ! -x "$jdk/bin/jar" ]; then
  die "no JDK at $jdk (set SPARK_IMAGES_JDK)"
fi
jdk_version=$("$jdk/bin/java" -XshowSettings:properties -version 2>&1 |
  sed -n 's/^ *java\.runtime\.version = //p')
case $jdk_version in
  17.*) ;;
  *) die "$jdk is Java ${jdk_version:-unknown}; the stock images run Java 17" ;;
esac
jdk=$(readlink -f "$jdk")

# Pods run the host's python3 as found on the image's PATH.
pod_python=$(env PATH="$image_path" bash -c 'command -v python3' || true)
[ -n "$pod_python" ] || die "no python3 on $image_path (pods run the host's python3)"
pod_python_version=$("$pod_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case $pod_python_version in
  3.9 | 3.10 | 3.11) ;;
  *) die "$pod_python is Python $pod_python_version; PySpark 3.4 to 4.3 need 3.9 to 3.11" ;;
esac

venv_python=${SPARK_IMAGES_PYTHON:-}
if [ -z "$venv_python" ]; then
  if [ -x /usr/bin/python3 ]; then venv_python=/usr/bin/python3; else venv_python=$(command -v python3); fi
fi
"$venv_python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] < (3, 10))' ||
  die "$venv_python must be Python 3.10 or later with venv and ensurepip (the Kubeflow SDK needs 3.10)"

# Only the versions named on the command line, if any: releases (X.Y.Z) from $oldest on.
build_all=yes
versions=("${pinned[@]}")
if [ $# -gt 0 ]; then
  build_all=no
  for v in "$@"; do
    [[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] ||
      die "no image of Spark $v: only releases are prepared (X.Y.Z, from $oldest on)"
    [ "$(printf '%s\n' "$oldest" "$v" | sort -V | head -1)" = "$oldest" ] ||
      die "no image of Spark $v: this sandbox prepares Spark $oldest and later (Java 17 and Python 3.11 run them)"
  done
  versions=("$@")
fi

# scala_of <version>: the Scala version of the release's distribution (the pyspark sdist's jars).
scala_of() {
  case $1 in
    3.*) echo 2.12 ;;
    *) echo 2.13 ;;
  esac
}

mkdir -p "$out/.stamps" "$downloads"
# One build at a time: `make spark-images` and the sandbox's kubelet may start one together, and
# images.json lists the layers present when it is written.
exec 9>"$out/.lock"
if ! flock -n 9; then
  step "waiting for another build of $out to finish"
  flock 9
fi
# The download cache is per user, so builds of other clones may be filling it too.
exec 8>"$downloads/.lock"
if ! flock -n 8; then
  step "waiting for another build's downloads in $downloads"
  flock 8
fi

# ---------------------------------------------------------------------------------------------
# pinned_sha256 <requirements file>: the one sha256 a --require-hashes file pins.
pinned_sha256() {
  local sum
  sum=$(sed -n 's/.*--hash=sha256:\([0-9a-f]\{64\}\).*/\1/p' "$1")
  [ "$(printf '%s\n' "$sum" | wc -w)" = 1 ] || die "$1 must pin exactly one sha256"
  printf '%s\n' "$sum"
}

# requirement_file <version>: the --require-hashes file of pyspark==<version>: ours when the version
# is pinned here; else the one made from the sha256 the package index lists, kept in the download
# cache, so that the sdist there is checked again offline.
requirement_file() {
  local version=$1 file=$downloads/pyspark-$1.txt sum reason
  if [ -f "$here/pyspark-$version.txt" ]; then
    printf '%s\n' "$here/pyspark-$version.txt"
    return 0
  fi
  if [ ! -f "$file" ]; then
    build_venv .pip-download >&2
    step "index pyspark==$version: the sha256 of its sdist, from the package index (pip)" >&2
    if ! sum=$("$out/.pip-download/bin/python" "$here/index-sha256.py" "$version" 2>"$file.err"); then
      reason=$(tail -1 "$file.err")
      rm -f "$file.err"
      die "no image of Spark $version: ${reason:-pip could not read the package index}"
    fi
    rm -f "$file.err"
    printf '# pyspark %s: the sdist'"'"'s sha256 as the package index listed it (hack/spark-images/index-sha256.py)\npyspark==%s \\\n    --hash=sha256:%s\n' \
      "$version" "$version" "$sum" | write_if_changed "$file"
  fi
  printf '%s\n' "$file"
}

# fetch_sdist <version> <sha256> <requirements file>: pyspark-<version>.tar.gz in the download
# cache, verified. pip downloads it from the index the user's pip configuration names, and checks
# the hash the requirements file pins.
# pip prepares an sdist's metadata even for a download: without build isolation, in the venv
# .pip-download (build requirements hash-checked too), not in one pip fills from the index
# unpinned. --no-cache-dir: the download cache is the only copy kept.
fetch_sdist() {
  local version=$1 sum=$2 requirements=$3 file=pyspark-$1.tar.gz
  if [ -f "$downloads/$file" ] && [ "$(sha256 "$downloads/$file")" = "$sum" ]; then
    step "download $file: cached, sha256 verified"
    return 0
  fi
  rm -f "$downloads/$file"
  build_venv .pip-download
  step "download $file: pip download --require-hashes -r pyspark-$version.txt"
  local log
  log=$(mktemp "$out/.pip-download-$version.XXXXXX")
  # pip's errors and warnings go to the terminal and to the log its failure is explained from;
  # its progress stays on standard output.
  if ! { "$out/.pip-download/bin/python" -m pip download --disable-pip-version-check --no-cache-dir \
    --no-deps --no-binary :all: --no-build-isolation --require-hashes \
    --progress-bar "${SPARK_IMAGES_PROGRESS:-on}" \
    -r "$requirements" -d "$downloads" 2>&1 1>&3 | tee "$log" >&2; } 3>&1; then
    local reason
    reason=$(download_failure "$log" "$file" "$requirements")
    rm -f "$log" "$downloads/$file"
    die "pip download of $file failed: $reason"
  fi
  rm -f "$log"
  [ -f "$downloads/$file" ] || die "pip download saved no $file in $downloads"
}

# download_failure <pip's stderr> <file> <version>: why pip download failed, in words.
download_failure() {
  local log=$1 file=$2 requirements=$3 expected got
  if grep -q 'DO NOT MATCH THE HASHES' "$log"; then
    expected=$(sed -n 's/.*Expected sha256 \([0-9a-f]*\).*/\1/p' "$log" | head -1)
    got=$(sed -n 's/.* Got  *\([0-9a-f]*\).*/\1/p' "$log" | head -1)
    printf 'checksum mismatch: the package index served %s with sha256 %s, %s pins %s\n' \
      "$file" "${got:-unknown}" "$(basename "$requirements")" "${expected:-unknown}"
  elif grep -qE 'NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|ConnectTimeout|ProxyError|Connection refused' "$log"; then
    printf 'package index unreachable (no network, or the index, mirror or proxy of your pip configuration is down): %s\n' \
      "$(grep -oE "(Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|ConnectTimeout|ProxyError|Connection refused)[^'\")]*" "$log" | tail -1)"
  elif grep -q 'No matching distribution found' "$log"; then
    printf 'the package index has no %s\n' "$file"
  else
    printf '%s\n' "$(grep '^ERROR' "$log" | tail -1 | sed 's/^ERROR: //')"
  fi
}

# write_if_changed <file>: standard input to the file, leaving it untouched when identical.
# A stamp goes through it too: a new file renamed over the old one, never a write through it, so
# that a copy of the cache made with hard links (cp -al) keeps stamps of its own.
write_if_changed() {
  local tmp
  tmp=$(mktemp "$1.XXXXXX")
  cat >"$tmp"
  if [ -f "$1" ] && cmp -s "$tmp" "$1"; then
    rm -f "$tmp"
  else
    chmod 0644 "$tmp"
    mv "$tmp" "$1"
  fi
}

# users_file <host file> <line>: the host's passwd or group without any spark / 185 entry, plus
# the image's entry.
users_file() {
  awk -F: -v uid="$image_uid" '$1 != "spark" && $3 != uid' "$1"
  printf '%s\n' "$2"
}

# ---------------------------------------------------------------------------------------------
# build_root <version>: the layer spark-<version>.
build_root() {
  local version=$1 scala requirements sum
  scala=$(scala_of "$version")
  requirements=$(requirement_file "$version")
  sum=$(pinned_sha256 "$requirements")
  local name=spark-$version root=$out/spark-$version stamp=$out/.stamps/spark-$version
  local home locale_alias=no
  # The stock spark user: useradd --system without a home on 3.5, with -d /nonexistent on 4.0.
  case $version in
    3.*) home=/home/spark ;;
    *) home=/nonexistent ;;
  esac
  # The stock images generate en_US.UTF-8 and set LC_ALL to it. A host without that locale gets
  # an alias of C.utf8 in the layer, so shells and the JVM do not fall back to ASCII.
  if ! locale -a 2>/dev/null | grep -qix 'en_US.utf-\?8' && [ -d /usr/lib/locale/C.utf8 ]; then
    locale_alias=yes
  fi

  local key
  key=$(
    {
      printf '%s\n' "$version $scala $sum $jdk $jdk_version $home $locale_alias $image_uid"
      cat "$here/build.sh" "$here/entrypoint.sh" "$here"/sbin/*.sh "$here"/examples/*.java \
        "$here/examples/pi.py" "$here"/examples/streaming/*.py "$here"/tests/*.py /etc/passwd /etc/group
    } | sha256sum | cut -d' ' -f1
  )
  if [ -d "$root" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
    step "layer $name: up to date"
    return 0
  fi

  fetch_sdist "$version" "$sum" "$requirements"

  local tmp=$out/.$name.tmp work=$out/.$name.work
  rm -rf "$tmp" "$work"
  mkdir -p "$tmp/opt/spark" "$work"

  step "layer $name: unpack the Spark distribution from pyspark-$version.tar.gz"
  tar -xzf "$downloads/pyspark-$version.tar.gz" -C "$work" --strip-components=1 --no-same-owner \
    "pyspark-$version/deps" "pyspark-$version/lib" "pyspark-$version/pyspark"
  local spark=$tmp/opt/spark d
  for d in bin sbin jars data licenses; do
    mv "$work/deps/$d" "$spark/$d"
  done
  ls "$spark/jars/spark-kubernetes_$scala-$version.jar" >/dev/null ||
    die "pyspark-$version.tar.gz has no spark-kubernetes_$scala-$version.jar"
  printf 'Spark %s (Scala %s), from the PyPI sdist pyspark-%s.tar.gz (sha256 %s)\n' \
    "$version" "$scala" "$version" "$sum" >"$spark/RELEASE"
  mkdir -p "$spark/conf" "$spark/work-dir" "$spark/python/lib" "$spark/examples/jars" \
    "$spark/examples/src/main/python/streaming"

  # python/: the package and the release's zips, which PYTHONPATH and spark-submit use.
  mv "$work/pyspark" "$spark/python/pyspark"
  mv "$work"/lib/py4j-*-src.zip "$spark/python/lib/"
  if [ -f "$work/lib/pyspark.zip" ]; then
    mv "$work/lib/pyspark.zip" "$spark/python/lib/pyspark.zip"
  else
    (cd "$spark/python" && "$pod_python" -m zipfile -c lib/pyspark.zip pyspark/)
  fi

  # Our start/stop scripts for the standalone daemons, next to the release's spark-daemon.sh.
  install -m 0755 "$here"/sbin/*.sh "$spark/sbin/"

  # SparkPi and JavaSparkPi are what users run; CustomReceiver and streaming/network_wordcount.py
  # what Apache's operator e2e suite runs, JavaWordCount and sql.JavaSparkSQLCli its examples; the
  # others are the programs Spark's Kubernetes integration tests run
  # (sandbox/e2e/spark/integration_test.go), all our own code.
  step "layer $name: compile the examples against Spark $version, jar spark-examples_$scala-$version.jar"
  mkdir -p "$work/classes"
  "$jdk/bin/javac" --release 17 -nowarn -encoding UTF-8 -cp "$spark/jars/*" -d "$work/classes" \
    "$here"/examples/*.java
  "$jdk/bin/jar" --create --date=2025-01-01T00:00:00Z \
    --file "$spark/examples/jars/spark-examples_$scala-$version.jar" -C "$work/classes" .
  ln -s "spark-examples_$scala-$version.jar" "$spark/examples/jars/spark-examples.jar"
  install -m 0644 "$here/examples/pi.py" "$spark/examples/src/main/python/pi.py"
  install -m 0644 "$here"/examples/streaming/*.py "$spark/examples/src/main/python/streaming/"
  # The stock Python images carry Spark's integration-test programs in /opt/spark/tests.
  mkdir -p "$spark/tests"
  install -m 0644 "$here"/tests/*.py "$spark/tests/"

  step "layer $name: /opt/entrypoint.sh, /opt/java/openjdk -> $jdk, /etc/passwd and /etc/group"
  install -m 0755 "$here/entrypoint.sh" "$tmp/opt/entrypoint.sh"
  mkdir -p "$tmp/opt/java" "$tmp/etc"
  ln -s "$jdk" "$tmp/opt/java/openjdk"
  users_file /etc/passwd "spark:x:$image_uid:$image_uid::$home:/bin/sh" >"$tmp/etc/passwd"
  users_file /etc/group "spark:x:$image_uid:" >"$tmp/etc/group"
  # Group-writable, as Spark's own Dockerfile leaves it: a pod running as a uid the image does
  # not know (group 0, as runtimes give it) lets the entrypoint add its entry, in the pod's
  # writable layer. (The apache/spark images use libnss_wrapper instead.)
  chmod 0664 "$tmp/etc/passwd"
  chmod 0644 "$tmp/etc/group"
  if [ "$locale_alias" = yes ]; then
    mkdir -p "$tmp/usr/lib/locale"
    ln -s C.utf8 "$tmp/usr/lib/locale/en_US.utf8"
  fi

  # The stock image gives /opt/spark to the spark user; work-dir is also group-writable.
  chmod -R u+rwX,go+rX,go-w "$spark"
  chmod g+w "$spark/work-dir"
  if [ "$(id -u)" = 0 ]; then
    chown -R "$image_uid:$image_uid" "$spark"
  else
    printf 'spark-images: not root, so /opt/spark in %s stays owned by uid %s, not %s\n' \
      "$name" "$(id -u)" "$image_uid" >&2
  fi

  rm -rf "$work" "$root"
  mv "$tmp" "$root"
  printf '%s\n' "$key" | write_if_changed "$stamp"
  step "layer $name: ready ($(du -sh "$root" | cut -f1))"
}

# ---------------------------------------------------------------------------------------------
# images.json: each image reference the layers stand in for, with the stock image's config.

write_images() {
  step "image table $out/images.json"
  # Every layer present, whichever versions this run built; with its size in bytes, which a
  # kubelet reports for a pulled image.
  local layer version present=()
  for layer in "$out"/spark-*/; do
    [ -d "$layer" ] || continue
    version=$(basename "$layer")
    version=${version#spark-}
    present+=("$version $(scala_of "$version") $(du -sb "$layer" | cut -f1)")
  done
  "$pod_python" - "$jdk_version" "${present[@]}" <<'PY' | write_if_changed "$out/images.json"
import json
import sys

jdk_version, sdists = sys.argv[1], sys.argv[2:]
# eclipse-temurin writes JAVA_VERSION as jdk-<feature.interim.update>+<build>.
java_version = "jdk-" + jdk_version.split("-")[0]
gpg_keys = {"3.5.3": "0A2D660358B6F6F8071FD16F6606986CF5A8447C",
            "4.0.1": "F28C9C925C188C35E345614DEDA00CE834F0FC5C"}
# The release manager's key of 4.3.0 is not known here; nothing reads GPG_KEY in a pod.
# The stock images of the newest release of a line download from the mirrors, the others from the
# archive; the pinned versions say which they are, the others are said to come from the archive.
tgz_urls = {"4.0.1": "https://www.apache.org/dyn/closer.lua/spark/spark-4.0.1/spark-4.0.1-bin-hadoop3.tgz?action=download",
            "4.3.0": "https://www.apache.org/dyn/closer.lua/spark/spark-4.3.0/spark-4.3.0-bin-hadoop3.tgz?action=download"}
images = {}
for line in sdists:
    version, scala, size = line.split()
    url = tgz_urls.get(version, "https://archive.apache.org/dist/spark/spark-%s/spark-%s-bin-hadoop3.tgz" % (version, version))
    asc = url.replace(".tgz", ".tgz.asc")
    config = {
        "root": "spark-" + version,
        "size": int(size),
        "entrypoint": ["/opt/entrypoint.sh"],
        "workingDir": "/opt/spark/work-dir",
        "user": "185",
        "env": [
            "PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "JAVA_HOME=/opt/java/openjdk",
            "LANG=en_US.UTF-8",
            "LANGUAGE=en_US:en",
            "LC_ALL=en_US.UTF-8",
            "JAVA_VERSION=" + java_version,
            "SPARK_TGZ_URL=" + url,
            "SPARK_TGZ_ASC_URL=" + asc,
        ] + (["GPG_KEY=" + gpg_keys[version]] if version in gpg_keys else []) + [
            "SPARK_HOME=/opt/spark",
        ],
    }
    # The stock tags of a Java 17 image with Python or with Scala only (every layer has both);
    # sandbox/internal/sparkimages refuses the others (R, Java 11 or 21) before building.
    full = "%s-scala%s-java17" % (version, scala)
    tags = [version, version + "-python3", version + "-scala", version + "-java17",
            version + "-java17-python3", version + "-scala-java17", full + "-ubuntu",
            full + "-python3-ubuntu"]
    for name in ("apache/spark", "spark"):
        for tag in tags:
            images["%s:%s" % (name, tag)] = config
json.dump({"images": images}, sys.stdout, indent=2, sort_keys=True)
sys.stdout.write("\n")
PY
}

# ---------------------------------------------------------------------------------------------
# install_build_requirements <venv>: requirements-build.txt into the venv, from the wheels kept in
# the download cache; missing ones are downloaded first (pip download, hash-checked), so that once
# they are there a venv is made without the package index.
install_build_requirements() {
  local venv=$1 wheels=$downloads/build-wheels
  local install=("$venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes
    --no-deps --no-index --find-links "$wheels" -r "$here/requirements-build.txt")
  step "venv $(basename "$venv"): pip install --require-hashes -r requirements-build.txt"
  if "${install[@]}" 2>/dev/null; then
    return 0
  fi
  mkdir -p "$wheels"
  "$venv/bin/python" -m pip download -q --disable-pip-version-check --require-hashes --no-deps \
    --only-binary :all: -r "$here/requirements-build.txt" -d "$wheels" ||
    die "pip download -r requirements-build.txt failed: pip says why above (package index unreachable, hash mismatch, ...)"
  "${install[@]}"
}

# ---------------------------------------------------------------------------------------------
# build_venv <name> <requirements file>...: a venv holding exactly the pinned, hash-checked
# requirements. requirements-build.txt (setuptools, for the sdist-only pyspark-client) goes in
# first; sdists are then built without build isolation, so every package is hash-checked.
build_venv() {
  local name=$1
  shift
  local venv=$out/$name stamp=$out/.stamps/$name key
  key=$(
    {
      # Bump the recipe when changing how build_venv installs.
      echo "venv recipe 2"
      "$venv_python" -c 'import sys; print(sys.executable, sys.version)'
      cat "$here/requirements-build.txt" "$@"
    } | sha256sum | cut -d' ' -f1
  )
  if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
    step "venv $name: up to date"
    return 0
  fi
  step "venv $name: create with $("$venv_python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  rm -rf "$venv" "$stamp"
  "$venv_python" -m venv "$venv"
  install_build_requirements "$venv"
  local r
  for r in "$@"; do
    step "venv $name: pip install --require-hashes -r $(basename "$r")"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes \
      --no-build-isolation -r "$r"
  done
  printf '%s\n' "$key" | write_if_changed "$stamp"
}

# ---------------------------------------------------------------------------------------------

start=$SECONDS
step "spark-images into $out (JDK $jdk_version at $jdk; pods use $pod_python, Python $pod_python_version)"
for version in "${versions[@]}"; do
  build_root "$version"
done
write_images
if [ "$build_all" = yes ]; then
  build_venv pyclient-4.0.1 "$here/requirements-pyclient-4.0.1.txt"
  build_venv kubeflow-sdk "$here/requirements-kubeflow-sdk.txt"
fi
step "done in $((SECONDS - start))s"
