#!/usr/bin/env bash
# Starts a Spark standalone master on this machine. Written for sparkhooks' stand-in Spark image
# roots (hack/spark-images), following the behaviour documented for Spark's sbin/start-master.sh
# (https://spark.apache.org/docs/latest/spark-standalone.html):
#
#   SPARK_MASTER_HOST        address to bind and advertise (default: hostname -f)
#   SPARK_MASTER_PORT        port of the master (default 7077)
#   SPARK_MASTER_WEBUI_PORT  port of the web UI (default 8080)
#   SPARK_MASTER_OPTS        JVM properties for the master (read by bin/spark-class)
#   SPARK_NO_DAEMONIZE       when set, the master runs in the foreground of this script, so a
#                            container lives as long as the master
#
# Further arguments go to org.apache.spark.deploy.master.Master. The daemon is run by
# sbin/spark-daemon.sh, which logs under SPARK_LOG_DIR (default $SPARK_HOME/logs) when it
# daemonizes and writes to standard output when SPARK_NO_DAEMONIZE is set.

if [ -z "${SPARK_HOME}" ]; then
  SPARK_HOME="$(cd "$(dirname "$0")/.." && pwd)"
fi
export SPARK_HOME

class=org.apache.spark.deploy.master.Master

for arg in "$@"; do
  if [ "$arg" = "--help" ] || [ "$arg" = "-h" ]; then
    echo "Usage: ./sbin/start-master.sh [options]" >&2
    "${SPARK_HOME}/bin/spark-class" "$class" --help 2>&1 | grep -v -e "^Using Spark's default log4j" \
      -e "^Started daemon with process name" -e "^Registered signal handler for" >&2
    exit 1
  fi
done

. "${SPARK_HOME}/sbin/spark-config.sh"
. "${SPARK_HOME}/bin/load-spark-env.sh"

host=${SPARK_MASTER_HOST:-$(hostname -f 2>/dev/null || hostname)}

exec "${SPARK_HOME}/sbin/spark-daemon.sh" start "$class" 1 \
  --host "$host" \
  --port "${SPARK_MASTER_PORT:-7077}" \
  --webui-port "${SPARK_MASTER_WEBUI_PORT:-8080}" \
  "$@"
