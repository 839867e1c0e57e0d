#!/usr/bin/env bash
# Installs Apache Airflow with its Kubernetes provider (SparkKubernetesOperator and
# SparkKubernetesSensor), as pinned with pip's hashes in requirements.txt, for the Airflow
# end-to-end test (sandbox/e2e/spark/airflow_test.go), once per user into
# ${SPARKHOOKS_CACHE:-$XDG_CACHE_HOME/sparkhooks}/airflow/<key>, where the key is a hash of the pins,
# of this recipe and of the Python it runs on. Prints that directory:
#   venv/         Airflow 3.3.2 and apache-airflow-providers-cncf-kubernetes 10.25.0 (wheels only)
#   examples/     Airflow's own SparkApplication examples, from the provider's source distribution
#                 (tests/system/cncf/kubernetes: the example DAG, its spark-pi YAML and the
#                 spark_job_template.yaml the provider's docs show)
#   airflow.db    a metadata database `airflow db migrate` made (SQLite), which each test copies
#                 rather than migrating one of its own (half a minute)
# Everything comes through pip, so the index, mirror or proxy of the user's pip configuration
# applies. Python is /usr/bin/python3 (else python3), of the minor version requirements.txt was
# compiled for. Cold: about 70 MB of wheels and a 440 MB venv, two to three minutes on two
# shared cores; a second run only finds the directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

die() {
	echo "hack/airflow/build.sh: $*" >&2
	exit 1
}

# The Python requirements.txt was compiled with (lock.sh): its environment markers hold for it.
locked_python=3.11
python=${AIRFLOW_PYTHON:-}
if [ -z "$python" ]; then
	if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=$(command -v python3) || die "no python3"; fi
fi
version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$version" = "$locked_python" ] ||
	die "$python is Python $version; requirements.txt pins Airflow for Python $locked_python (set AIRFLOW_PYTHON, or run lock.sh with your Python)"
"$python" -c 'import venv, ensurepip' 2>/dev/null || die "$python lacks venv or ensurepip (Debian: apt-get install python3-venv)"

key=$(
	{
		# Bump the recipe when changing how this script installs.
		echo "airflow recipe 2"
		"$python" -c 'import sys; print(sys.executable, sys.version)'
		cat "$here/pip.txt" "$here/requirements.txt" "$here/provider-sdist.txt"
	} | sha256sum | cut -c1-16
)
cache=${SPARKHOOKS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sparkhooks}/airflow
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
out=$cache/$key
if [ -f "$out/.done" ]; then
	echo "$out"
	exit 0
fi

exec 9>"$cache/.lock"
flock 9
if [ ! -f "$out/.done" ]; then
	begin=$SECONDS
	echo "installing Airflow into $out (first time only: about 70 MB through pip)" >&2
	# A venv is not relocatable (its scripts name their interpreter), so it is made in place;
	# .done marks it whole. Other keys are older pins, replaced by this one.
	find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +
	rm -rf "$out"
	mkdir -p "$out/examples"
	"$python" -m venv "$out/venv"
	pip=("$out/venv/bin/python" -m pip --disable-pip-version-check -q)
	"${pip[@]}" install --require-hashes --only-binary :all: -r "$here/pip.txt" >&2 ||
		die "pip install -r hack/airflow/pip.txt failed: pip says why above"
	"${pip[@]}" install --require-hashes --only-binary :all: -r "$here/requirements.txt" >&2 ||
		die "pip install -r hack/airflow/requirements.txt failed: pip says why above (package index unreachable, hash mismatch, ...)"

	# The examples ship in the provider's sdist only. pip reads its metadata with flit_core from
	# the venv (requirements.txt), not with build requirements fetched unpinned.
	sdist=$(mktemp -d)
	trap 'rm -rf "$sdist"' EXIT
	"${pip[@]}" download --require-hashes --no-deps --no-binary :all: --no-build-isolation \
		-r "$here/provider-sdist.txt" -d "$sdist" >&2 ||
		die "pip download -r hack/airflow/provider-sdist.txt failed: pip says why above"
	tar -xzf "$sdist"/apache_airflow_providers_cncf_kubernetes-*.tar.gz -C "$out/examples" \
		--strip-components 5 --wildcards '*/tests/system/cncf/kubernetes/*spark*'
	for f in example_spark_kubernetes.py example_spark_kubernetes_spark_pi.yaml spark_job_template.yaml; do
		[ -f "$out/examples/$f" ] || die "the provider's sdist has no tests/system/cncf/kubernetes/$f"
	done

	home=$(mktemp -d)
	AIRFLOW_HOME=$home AIRFLOW__CORE__LOAD_EXAMPLES=False "$out/venv/bin/airflow" db migrate >"$home/migrate.log" 2>&1 ||
		die "airflow db migrate failed: $(tail -20 "$home/migrate.log")"
	mv "$home/airflow.db" "$out/airflow.db"
	rm -rf "$home"
	touch "$out/.done"
	echo "Airflow installed in $((SECONDS - begin)) s" >&2
fi
echo "$out"
