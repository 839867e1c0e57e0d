#!/usr/bin/env bash
# Stops the Spark standalone master that sbin/start-master.sh started as a daemon on this machine
# (not needed with SPARK_NO_DAEMONIZE, where stopping the script's process stops the master).
# Written for sparkhooks' stand-in Spark image roots (hack/spark-images).

if [ -z "${SPARK_HOME}" ]; then
  SPARK_HOME="$(cd "$(dirname "$0")/.." && pwd)"
fi
export SPARK_HOME

. "${SPARK_HOME}/sbin/spark-config.sh"

exec "${SPARK_HOME}/sbin/spark-daemon.sh" stop org.apache.spark.deploy.master.Master 1
