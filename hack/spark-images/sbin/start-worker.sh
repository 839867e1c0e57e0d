#!/usr/bin/env bash
# Starts a Spark standalone worker on this machine and registers it with the master(s) given as
# the first argument (spark://host:port, or spark://host1:port1,host2:port2 for standby masters).
# Written for sparkhooks' stand-in Spark image roots (hack/spark-images), following the
# behaviour documented for Spark's sbin/start-worker.sh
# (https://spark.apache.org/docs/latest/spark-standalone.html):
#
#   SPARK_WORKER_WEBUI_PORT  port of the first worker's web UI (default 8081)
#   SPARK_WORKER_PORT        port of the first worker (default: random)
#   SPARK_WORKER_CORES       cores the worker offers (default: all)
#   SPARK_WORKER_MEMORY      memory the worker offers, e.g. 1000m or 2g (default: total - 1 GiB)
#   SPARK_WORKER_INSTANCES   workers to start on this machine (default 1); the n-th uses the
#                            ports above plus n-1
#   SPARK_WORKER_OPTS        JVM properties for the worker (read by bin/spark-class)
#   SPARK_NO_DAEMONIZE       when set, the worker runs in the foreground of this script, so a
#                            container lives as long as the worker
#
# Arguments after the master URL go to org.apache.spark.deploy.worker.Worker.

if [ -z "${SPARK_HOME}" ]; then
  SPARK_HOME="$(cd "$(dirname "$0")/.." && pwd)"
fi
export SPARK_HOME

class=org.apache.spark.deploy.worker.Worker

usage() {
  echo "Usage: ./sbin/start-worker.sh <master> [options]" >&2
  echo "  <master> is the URL of the master, spark://host:port" >&2
}

if [ $# -lt 1 ]; then
  usage
  exit 1
fi
for arg in "$@"; do
  if [ "$arg" = "--help" ] || [ "$arg" = "-h" ]; then
    usage
    "${SPARK_HOME}/bin/spark-class" "$class" --help 2>&1 | grep -v -e "^Using Spark's default log4j" \
      -e "^Started daemon with process name" -e "^Registered signal handler for" >&2
    exit 1
  fi
done

. "${SPARK_HOME}/sbin/spark-config.sh"
. "${SPARK_HOME}/bin/load-spark-env.sh"

master=$1
shift

# worker_command sets the array cmd to the spark-daemon.sh invocation of worker number $1.
worker_command() {
  local n=$1
  cmd=("${SPARK_HOME}/sbin/spark-daemon.sh" start "$class" "$n"
    --webui-port "$((${SPARK_WORKER_WEBUI_PORT:-8081} + n - 1))")
  if [ -n "${SPARK_WORKER_PORT}" ]; then
    cmd+=(--port "$((SPARK_WORKER_PORT + n - 1))")
  fi
  if [ -n "${SPARK_WORKER_CORES}" ]; then
    cmd+=(--cores "$SPARK_WORKER_CORES")
  fi
  if [ -n "${SPARK_WORKER_MEMORY}" ]; then
    cmd+=(--memory "$SPARK_WORKER_MEMORY")
  fi
  cmd+=("$master")
}

instances=${SPARK_WORKER_INSTANCES:-1}
if [ "$instances" -le 1 ]; then
  worker_command 1
  exec "${cmd[@]}" "$@"
fi
for ((i = 1; i <= instances; i++)); do
  worker_command "$i"
  "${cmd[@]}" "$@"
done
