#!/bin/bash
# /opt/entrypoint.sh of sparkhooks' stand-in Spark image roots (hack/spark-images), written for
# them. It keeps the contract of the apache/spark images' entrypoint, which Spark on Kubernetes
# relies on:
#
#   entrypoint.sh driver <spark-submit arguments>
#       runs $SPARK_HOME/bin/spark-submit in client mode, bound to $SPARK_DRIVER_BIND_ADDRESS
#       (the pod IP), and tells the executors that address as SPARK_DRIVER_POD_IP;
#   entrypoint.sh executor
#       runs the KubernetesExecutorBackend JVM from the SPARK_EXECUTOR_* / SPARK_DRIVER_URL /
#       SPARK_APPLICATION_ID / SPARK_JAVA_OPT_<n> variables the driver puts in executor pods;
#   entrypoint.sh <anything else>
#       runs that command as given.
#
# Differences from the stock script: no tini (the command replaces this shell, so signals reach
# the JVM directly); SPARK_JAVA_OPT_<n> are taken in numeric order of n; as root, the switch to
# the spark user uses setpriv instead of gosu; without a passwd entry for the current uid, one is
# added to /etc/passwd when that file is writable (the stock image uses libnss_wrapper, used here
# too when the host has it).
set -eo pipefail

SPARK_HOME=${SPARK_HOME:-/opt/spark}
export SPARK_HOME

if [ -z "${JAVA_HOME}" ]; then
  JAVA_HOME=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.home = //p')
fi

# join_path prints its non-empty arguments separated by colons.
join_path() {
  local out="" part
  for part in "$@"; do
    [ -n "$part" ] || continue
    out=${out:+$out:}$part
  done
  printf '%s' "$out"
}

# The executor classpath: configuration directories first (so spark-defaults, log4j2 and Hadoop
# files mounted there are found), then what the pod asks for, the distribution's jars, the extra
# classpath and the working directory (SPARK-43540).
conf_dir=${SPARK_CONF_DIR:-$SPARK_HOME/conf}
classpath=$(join_path "$conf_dir" "${HADOOP_CONF_DIR:-}" "${SPARK_CLASSPATH:-}" \
  "$SPARK_HOME/jars/*" "${SPARK_EXTRA_CLASSPATH:-}" "$PWD")

# A Hadoop installation in the pod contributes its jars, unless the pod already chose them.
if [ -n "${HADOOP_HOME}" ] && [ -z "${SPARK_DIST_CLASSPATH}" ]; then
  SPARK_DIST_CLASSPATH=$("$HADOOP_HOME/bin/hadoop" classpath)
  export SPARK_DIST_CLASSPATH
fi

# Python settings the driver passes on must reach spark-submit's Python runner.
if [ -n "${PYSPARK_PYTHON+set}" ]; then export PYSPARK_PYTHON; fi
if [ -n "${PYSPARK_DRIVER_PYTHON+set}" ]; then export PYSPARK_DRIVER_PYTHON; fi

# executor_java_opts fills the array java_opts with the values of SPARK_JAVA_OPT_0,
# SPARK_JAVA_OPT_1, ... in numeric order (other SPARK_JAVA_OPT_* names follow, sorted).
executor_java_opts() {
  local name
  java_opts=()
  while read -r name; do
    [ -n "$name" ] && java_opts+=("${!name}")
  done < <(compgen -A variable SPARK_JAVA_OPT_ | awk -F_ '
    $4 ~ /^[0-9]+$/ { print 0, $4, $0; next }
    { print 1, 0, $0 }' | sort -k1,1n -k2,2n -k3,3 | awk '{ print $3 }')
}

# ensure_user gives the current uid a passwd entry when it has none (a pod's runAsUser that the
# image does not know), because Hadoop's UserGroupInformation looks the user name up.
ensure_user() {
  local uid gid wrapper
  uid=$(id -u)
  gid=$(id -g)
  if getent passwd "$uid" >/dev/null 2>&1; then
    return 0
  fi
  for wrapper in /usr/lib/*/libnss_wrapper.so /usr/lib/libnss_wrapper.so /lib/*/libnss_wrapper.so; do
    if [ -s "$wrapper" ]; then
      NSS_WRAPPER_PASSWD=$(mktemp)
      NSS_WRAPPER_GROUP=$(mktemp)
      printf 'spark:x:%s:%s:%s:%s:/bin/false\n' "$uid" "$gid" "${SPARK_USER_NAME:-anonymous uid}" \
        "$SPARK_HOME" >"$NSS_WRAPPER_PASSWD"
      printf 'spark:x:%s:\n' "$gid" >"$NSS_WRAPPER_GROUP"
      export LD_PRELOAD=$wrapper NSS_WRAPPER_PASSWD NSS_WRAPPER_GROUP
      return 0
    fi
  done
  if [ -w /etc/passwd ]; then
    printf 'spark:x:%s:%s:%s:%s:/bin/false\n' "$uid" "$gid" "${SPARK_USER_NAME:-anonymous uid}" \
      "$SPARK_HOME" >>/etc/passwd
  fi
}

# run replaces this shell with its arguments; as root it first drops to the image's spark user,
# as the stock image does.
run() {
  if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 && getent passwd spark >/dev/null; then
    local home
    home=$(getent passwd spark | cut -d: -f6)
    exec setpriv --reuid=spark --regid=spark --init-groups env HOME="$home" "$@"
  fi
  exec "$@"
}

case "$1" in
  driver)
    shift
    ensure_user
    run "$SPARK_HOME/bin/spark-submit" \
      --conf "spark.driver.bindAddress=$SPARK_DRIVER_BIND_ADDRESS" \
      --conf "spark.executorEnv.SPARK_DRIVER_POD_IP=$SPARK_DRIVER_BIND_ADDRESS" \
      --deploy-mode client \
      "$@"
    ;;
  executor)
    shift
    executor_java_opts
    ensure_user
    run "$JAVA_HOME/bin/java" \
      "${java_opts[@]}" \
      -Xms"$SPARK_EXECUTOR_MEMORY" \
      -Xmx"$SPARK_EXECUTOR_MEMORY" \
      -cp "$(join_path "$classpath" "${SPARK_DIST_CLASSPATH:-}")" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "$SPARK_DRIVER_URL" \
      --executor-id "$SPARK_EXECUTOR_ID" \
      --cores "$SPARK_EXECUTOR_CORES" \
      --app-id "$SPARK_APPLICATION_ID" \
      --hostname "$SPARK_EXECUTOR_POD_IP" \
      --resourceProfileId "$SPARK_RESOURCE_PROFILE_ID" \
      --podName "$SPARK_EXECUTOR_POD_NAME"
    ;;
  *)
    # Not a Spark-on-Kubernetes role: run the command as given.
    exec "$@"
    ;;
esac
