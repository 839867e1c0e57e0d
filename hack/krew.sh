#!/usr/bin/env bash
# Packages bin/kubectl-spark as a krew plugin: an archive and a manifest whose sha256 matches
# it, for `kubectl krew install --manifest=bin/krew/spark.yaml --archive=bin/krew/kubectl-spark_<os>_<arch>.tar.gz`
# (docs/sparkctl.md). A release publishes the same archive and points uri at it.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${VERSION:-dev}
os=$(go env GOOS)
arch=$(go env GOARCH)
out=bin/krew
mkdir -p "$out"
archive="kubectl-spark_${os}_${arch}.tar.gz"
cp bin/kubectl-spark "$out/kubectl-spark"
tar -C "$out" -czf "$out/$archive" kubectl-spark
sum=$(sha256sum "$out/$archive" | cut -d' ' -f1)
cat > "$out/spark.yaml" <<YAML
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: spark
spec:
  version: ${version}
  homepage: https://github.com/sparkhooks/sparkhooks
  shortDescription: Run and inspect Spark applications managed by sparkhooks
  description: |
    Creates SparkApplications (staging local dependencies to S3 or GCS, the local Hadoop
    configuration as a ConfigMap), runs a ScheduledSparkApplication now, follows driver logs
    across retries, shows status and events, and forwards the Spark UI.
  platforms:
    - selector:
        matchLabels:
          os: ${os}
          arch: ${arch}
      uri: https://github.com/sparkhooks/sparkhooks/releases/download/${version}/${archive}
      sha256: ${sum}
      bin: kubectl-spark
YAML
echo "$out/spark.yaml $out/$archive"
