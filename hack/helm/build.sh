#!/usr/bin/env bash
# Prints the path of the Helm client the sandbox and the end-to-end suites install the chart with,
# as a user does (helm install). hack/kube/build.sh builds it with Kubernetes, from the Helm
# release its module pins (helm.sh/helm/v4, built against the control plane's Kubernetes minor),
# once per user.
set -euo pipefail
echo "$("$(dirname "$0")/../kube/build.sh")/helm"
