#!/usr/bin/env bash
# Builds and fetches what the kubectl spark end-to-end tests (sandbox/e2e/sparkctl) stage files to and
# run, pinned here, once per user into ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/fixtures:
#   - MinIO, the S3-compatible server most S3 users run outside AWS (its last release before the
#     project froze), and fake-gcs-server, the GCS emulator cloud.google.com/go/storage's docs
#     point to: built from their Go modules with go install (checksummed by the Go checksum
#     database), as the machines that run the tests reach the Go module proxy but not the stores'
#     download sites;
#   - the Cloud Storage connector for Hadoop (gs:// for Spark), shaded, through Maven's resolver,
#     so a mirror in the user's Maven settings applies; its sha256 is checked here;
#   - the S3A connector (s3a:// for Spark 4.0: hadoop-aws 3.4.1 and the AWS SDK modules it calls,
#     s3a/pom.xml) the same way, into one directory of jars for a class path, each jar's sha256
#     checked against s3a/SHA256SUMS.
# Prints the variables the tests read (MINIO_BIN, FAKE_GCS_SERVER_BIN, GCS_CONNECTOR_JAR,
# S3A_JARS_DIR), one per line, for the Makefile to export. Cold: MinIO takes minutes to build on
# two cores.
set -euo pipefail

minio=github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c
fake_gcs=github.com/fsouza/fake-gcs-server@v1.56.1
# 3.1.18 is the newest 3.1 release with a shaded jar; the 3.1 line is built against Hadoop 3.3 and
# runs on the Hadoop 3.4 client of Spark 4.0.
connector=com.google.cloud.bigdataoss:gcs-connector:3.1.18:jar:shaded
connector_sha256=9eaeb8452af54c2a0feaa60bd570eb36b695d8666736979fec0f8d60e578e9c0
# Named with its version: a bare dependency:copy runs whichever version the local Maven binds.
dependency_plugin=org.apache.maven.plugins:maven-dependency-plugin:3.8.1

here=$(cd "$(dirname "$0")" && pwd)
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}/fixtures
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

# build module@version -> prints the binary's path
build() {
	local module=$1 dir="$cache/$(basename "$1")"
	local binary="$dir/$(basename "${1%@*}")"
	if [ ! -x "$binary" ]; then
		echo "building $module (first time only)" >&2
		(cd "${TMPDIR:-/tmp}" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$dir" go install -trimpath -ldflags "-s -w" "$module")
	fi
	echo "$binary"
}

minio_bin=$(build "$minio")
fake_gcs_bin=$(build "$fake_gcs")

IFS=: read -r group artifact version _ classifier <<<"$connector"
jar="$cache/$artifact-$version-$classifier.jar"
if ! echo "$connector_sha256  $jar" | sha256sum --check --status 2>/dev/null; then
	echo "fetching $connector with Maven" >&2
	mvn --batch-mode --quiet -Dstyle.color=never "$dependency_plugin:copy" -Dartifact="$connector" -DoutputDirectory="$cache" -Dmdep.overWriteReleases=true >&2
	echo "$connector_sha256  $jar" | sha256sum --check --quiet
fi

# The directory holds exactly the pinned jars: one more, of another version, would be on the class
# path too.
s3a_dir="$cache/s3a-hadoop-3.4.1"
s3a_sums="$here/s3a/SHA256SUMS"
s3a_ok() {
	(cd "$s3a_dir" 2>/dev/null && sha256sum --check --status "$s3a_sums" &&
		[ "$(ls)" = "$(awk '{print $2}' "$s3a_sums" | sort)" ])
}
if ! s3a_ok; then
	echo "fetching the S3A connector (hack/test-fixtures/s3a/pom.xml) with Maven" >&2
	rm -rf "$s3a_dir"
	# Left out: what the Spark 4.0 image has in /opt/spark/jars in a newer version (Netty, SLF4J,
	# Commons Codec, Apache HttpClient; Commons Logging through jcl-over-slf4j). Ahead of them on a
	# class path, the older copies would replace Spark's own.
	mvn --batch-mode --quiet -Dstyle.color=never -f "$here/s3a/pom.xml" "$dependency_plugin:copy-dependencies" \
		-DoutputDirectory="$s3a_dir" -DincludeScope=runtime \
		-DexcludeGroupIds=io.netty,org.slf4j,commons-codec,commons-logging,org.apache.httpcomponents >&2
	if ! s3a_ok; then
		echo "$s3a_dir does not hold exactly the jars of $s3a_sums:" >&2
		(cd "$s3a_dir" && sha256sum --check "$s3a_sums") >&2 || true
		exit 1
	fi
fi

echo "MINIO_BIN=$minio_bin"
echo "FAKE_GCS_SERVER_BIN=$fake_gcs_bin"
echo "GCS_CONNECTOR_JAR=$jar"
echo "S3A_JARS_DIR=$s3a_dir"
