#!/usr/bin/env bash
# Regenerates requirements.txt (every package pinned, with pip's hashes) from requirements.in with
# pip-compile, in a throwaway venv, and pins the provider's sdist in provider-sdist.txt. Run it
# when changing requirements.in, then commit all three; build.sh only installs what they pin.
#
#   hack/airflow/lock.sh            # with /usr/bin/python3 (else python3), as build.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${AIRFLOW_PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=$(command -v python3); fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check pip-tools==7.6.2
(cd "$here" && "$tmp/venv/bin/pip-compile" -q --generate-hashes --allow-unsafe --strip-extras \
  --no-emit-index-url --no-emit-find-links --no-header --rebuild -o requirements.txt requirements.in)

# The provider's sdist: its version from the lock, its hash from the index (pip download checks
# nothing here; build.sh then downloads it with --require-hashes against this file).
version=$(sed -n 's/^apache-airflow-providers-cncf-kubernetes==\([^ ]*\).*/\1/p' "$here/requirements.txt")
"$tmp/venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
  -d "$tmp/sdist" "apache-airflow-providers-cncf-kubernetes==$version"
sdist=$(ls "$tmp/sdist"/*.tar.gz)
printf 'apache-airflow-providers-cncf-kubernetes==%s \\\n    --hash=sha256:%s\n' \
  "$version" "$(sha256sum "$sdist" | cut -d' ' -f1)" >"$here/provider-sdist.txt"
