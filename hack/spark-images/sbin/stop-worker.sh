#!/usr/bin/env bash
# Stops the Spark standalone worker(s) that sbin/start-worker.sh started as daemons on this
# machine (SPARK_WORKER_INSTANCES of them, default 1). Written for sparkhooks' stand-in Spark
# image roots (hack/spark-images).

if [ -z "${SPARK_HOME}" ]; then
  SPARK_HOME="$(cd "$(dirname "$0")/.." && pwd)"
fi
export SPARK_HOME

. "${SPARK_HOME}/sbin/spark-config.sh"
. "${SPARK_HOME}/bin/load-spark-env.sh"

instances=${SPARK_WORKER_INSTANCES:-1}
for ((i = 1; i <= instances; i++)); do
  "${SPARK_HOME}/sbin/spark-daemon.sh" stop org.apache.spark.deploy.worker.Worker "$i"
done
