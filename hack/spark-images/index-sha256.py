"""Prints the sha256 the package index lists for the sdist of pyspark==VERSION.

build.sh runs this with the pip of its .pip-download venv (pinned in requirements-build.txt), for a
Spark version without a pyspark-<version>.txt: pip's own option parsing (so the user's pip.conf,
PIP_INDEX_URL, proxy and certificates apply), its session and its package finder, as `pip download
--no-binary :all:` would choose the file. The hash is the one the index publishes next to the link,
which build.sh then hands to `pip download --require-hashes`, so pip checks the download against
it. Exit status 2 and a line on standard error when the index has no such sdist or lists it
without a sha256.

    python index-sha256.py VERSION
"""

import sys

from pip._internal.commands import create_command
from pip._vendor.packaging.specifiers import SpecifierSet


def main(version):
    command = create_command("download")
    options, _ = command.parse_args(
        ["--no-deps", "--no-binary", ":all:", "pyspark==" + version])
    with command.main_context():
        session = command.get_default_session(options)
        finder = command._build_package_finder(options=options, session=session)
        best = finder.find_best_candidate(
            "pyspark", SpecifierSet("==" + version)).best_candidate
    if best is None or str(best.version) != version:
        # pip's finder treats an unreachable index as an empty one: say both.
        print("the package index has no pyspark==%s sdist (or pip could not reach the index:"
              " no network, or the index, mirror or proxy of your pip configuration is down)"
              % version, file=sys.stderr)
        return 2
    link = best.link
    if link.hash_name != "sha256" or not link.hash:
        print("the package index lists %s without a sha256" % link.filename, file=sys.stderr)
        return 2
    print(link.hash)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: index-sha256.py VERSION", file=sys.stderr)
        sys.exit(64)
    sys.exit(main(sys.argv[1]))
