#!/usr/bin/env bash
# Fails when a tracked file names the host of a package registry: the Python package index and
# its file host, Maven Central, the Go module proxy and checksum database, the npm registry.
# Downloads go through the registries' own clients (pip, mvn or Spark's spark.jars.packages, go,
# npm), which honour the user's configured index, mirror or proxy; a URL of the registry's host
# bypasses that configuration. Name artifacts by their coordinates instead, and give recorded
# URLs in goldens and fixtures a neutral host of the same shape (https://artifacts.example.com/).
#
#   hack/check-registry-hosts.sh      # from anywhere in the repository; exit 1 lists the lines
set -euo pipefail

# The host names are put together from their labels, so that this script, a tracked file too,
# does not spell them and passes its own check.
host() {
	local IFS=.
	printf '%s' "$*"
}
hosts=(
	"$(host pypi org)"
	"$(host pypi python org)"
	"$(host pythonhosted org)"
	"$(host maven org)"
	"$(host repo maven apache org)"
	"$(host central sonatype com)"
	"$(host oss sonatype org)"
	"$(host proxy golang org)"
	"$(host sum golang org)"
	"$(host registry npmjs org)"
)
alternatives=$(printf '%s|' "${hosts[@]//./\\.}")
# A host, or one of its subdomains, between characters that cannot be part of a host name.
pattern="(^|[^a-z0-9-])([a-z0-9-]+\.)*(${alternatives%|})([^a-z0-9-]|$)"

cd "$(git rev-parse --show-toplevel)"
status=0
git grep --line-number -I -i -E -e "$pattern" || status=$?
case $status in
	0)
		echo "check-registry-hosts: the lines above name a package registry's host; name the artifact by its coordinates (Maven, pip, Go module) or use a neutral host such as artifacts.example.com" >&2
		exit 1
		;;
	1) exit 0 ;; # git grep found nothing
	*) exit "$status" ;;
esac
