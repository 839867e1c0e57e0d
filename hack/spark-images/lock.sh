#!/usr/bin/env bash
# Regenerates the hash-pinned requirements-*.txt from requirements-*.in with pip-compile, in a
# throwaway venv. Run it when changing a .in file, then commit both; `make spark-images` only
# installs the .txt files (pip install --require-hashes).
#
#   hack/spark-images/lock.sh            # uses /usr/bin/python3 (else python3)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
python=${SPARK_IMAGES_PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=$(command -v python3); fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --disable-pip-version-check pip-tools==7.6.2
for in in "$here"/requirements-*.in; do
  txt=${in%.in}.txt
  echo "== $(basename "$in") -> $(basename "$txt")"
  (cd "$here" && "$tmp/venv/bin/pip-compile" -q --generate-hashes --allow-unsafe --strip-extras \
    --no-emit-index-url --no-emit-find-links --no-header --rebuild \
    -o "$(basename "$txt")" "$(basename "$in")")
done
