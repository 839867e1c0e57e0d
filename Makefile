# sparkhooks — see README.md. Every tool runs through `go run` at a pinned version, so a machine
# with only Go can run every target.
GO             ?= go
CONTROLLER_GEN ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
VERSION        ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE          ?= ghcr.io/sparkhooks/sparkhooks:$(VERSION)
E2EFLAGS       ?=
# The real Metacontroller, where the team's shared folder has it (its README); empty runs the
# local stand-in. Point it at your own build with METACONTROLLER_BIN=/path/to/metacontroller.
METACONTROLLER_BIN ?= $(wildcard $(CURDIR)/../shared/metacontroller/v4.17.2/metacontroller)
export METACONTROLLER_BIN
# The Kubeflow Spark Operator release (binary, entrypoint.sh, chart) make run OPERATOR=kubeflow
# installs in place of sparkhooks, where the team's shared folder has it.
KUBEFLOW_SPARK_OPERATOR ?= $(wildcard $(CURDIR)/../shared/kubeflow-spark-operator/v2.5.2)
export KUBEFLOW_SPARK_OPERATOR
# The Apache Spark Kubernetes Operator 1.0.0 source tree whose e2e suite (tests/e2e, run with
# chainsaw) make e2e and make e2e-apache run against the sandbox, where the shared folder has it.
APACHE_SPARK_OPERATOR ?= $(wildcard $(CURDIR)/../shared/apache-spark-kubernetes-operator/1.0.0)
export APACHE_SPARK_OPERATOR

.PHONY: run test bench bench-operators lint golangci-lint generate build krew image image-push image-docker chart-check e2e e2e-kubeflow e2e-apache chainsaw memload spark-images kueue gateway-api kube helm test-fixtures node airflow

## run: the local sandbox (bin/sparkhooks-local, docs/local.md): the real control plane with the chart
## installed by Helm and one node, where kubectl apply runs sparkhooks and real Spark (the Spark image a
## pod names is prepared on first use; simulated pods without root or with RUNFLAGS=--simulate); with
## NODE=containerd the node is the real one of make node (docs/real-node.md); with OPERATOR=kubeflow the
## Kubeflow Spark Operator's own chart (KUBEFLOW_SPARK_OPERATOR) runs in place of ours, to compare
## (docs/local.md); with APACHE=1 the Apache operator's SparkApplication is served too (its CRD and
## chart value, docs/apache.md); RUNFLAGS passes flags
# The operator, the sandbox and Kubernetes (hack/kube/build.sh) build with one set of flags, so the
# packages they share compile once on a first run (make lint keeps their versions equal too).
run:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/sparkhooks ./cmd/sparkhooks
	CGO_ENABLED=0 $(GO) build -C sandbox -trimpath -o $(CURDIR)/bin/sparkhooks-local ./cmd/sparkhooks-local
	bin/sparkhooks-local --kube-bin-dir "$$(hack/kube/build.sh)" --helm "$$(hack/helm/build.sh)" \
		$(if $(filter containerd,$(NODE)),--real-node "$$(hack/node/build.sh)") \
		$(if $(OPERATOR),--operator "$(OPERATOR)") $(if $(APACHE),--apache-spark-application) $(RUNFLAGS)

## test: unit, golden, schema and fuzz-seed tests of the operator, of the sandbox and of the image
## builder (modules of their own)
test:
	$(GO) test ./...
	cd sandbox && $(GO) test ./...
	cd hack/image && $(GO) test ./...

## bench: every benchmark with allocation figures
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd sandbox && $(GO) test -run '^$$' -bench . -benchmem ./...

## bench-operators: the operators' benchmark (docs/benchmarks.md): on the real control plane with
## simulated pods and the real Metacontroller (METACONTROLLER_BIN), BENCH_N applications created at once
## through sparkhooks, through the ceiling (a one-Pod hook: Metacontroller and the API server alone) and
## then through the Kubeflow Spark Operator (KUBEFLOW_SPARK_OPERATOR, as host processes with its image's
## Spark and Java from make spark-images; N up to 100), one after the other on one cluster; prints the
## table and the ratios. Not part of make e2e
BENCH_N ?= 100
bench-operators:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/sparkhooks ./cmd/sparkhooks
	CGO_ENABLED=0 $(GO) build -C sandbox -trimpath -o $(CURDIR)/bin/bench-operators ./cmd/bench-operators
	bin/bench-operators -kube-bin-dir "$$(hack/kube/build.sh)" -helm "$$(hack/helm/build.sh)" -n "$(BENCH_N)" \
		-kubeflow-image-root "$${SPARK_IMAGES_DIR:-.cache/spark-images}/kubeflow-spark-operator-2.5.2" $(BENCHFLAGS)

## lint: gofmt check, no registry host name in a tracked file, golangci-lint (.golangci.yml: go vet's
## analyzers, staticcheck, errcheck, doc comments, misspellings; built once per user by
## hack/golangci-lint/build.sh) over every module (the sandbox's end-to-end files too), and one
## version of each module across what make run builds
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted:"; echo "$$unformatted"; exit 1; fi
	hack/check-registry-hosts.sh
	golangci_lint="$$(hack/golangci-lint/build.sh)" && \
	"$$golangci_lint" run ./... && \
	(cd sandbox && "$$golangci_lint" run --build-tags e2e ./...) && \
	(cd hack/image && "$$golangci_lint" run ./...)
	cd sandbox && $(GO) run ./hack/buildversions ..:./cmd/sparkhooks .:./cmd/sparkhooks-local ../hack/kube:./cmd/kube,helm.sh/helm/v4/cmd/helm

## generate: deepcopy functions and CRDs from the Go types (crds/crds_test.go fails on drift)
generate:
	$(CONTROLLER_GEN) object paths=./internal/api/...
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./internal/api/... output:crd:artifacts:config=crds
	$(GO) run ./hack/crdtrim crds
	hack/helm-sync-crds.sh

## build: static binaries in bin/: sparkhooks and the kubectl plugin kubectl-spark (docs/sparkctl.md)
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o bin/sparkhooks ./cmd/sparkhooks
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o bin/kubectl-spark ./cmd/kubectl-spark

## krew: bin/krew/spark.yaml and the kubectl-spark archive it names, for kubectl krew install --manifest --archive
krew: build
	VERSION=$(VERSION) hack/krew.sh

## image: the container image, with no Docker engine (hack/image/build.sh): the static binaries over
## CA certificates, tzdata and the nonroot user (65532) from pinned Debian packages, as an OCI image
## layout in bin/image and the same as one tar stream in bin/image.tar (ctr images import, docker
## load); reproducible byte for byte (SOURCE_DATE_EPOCH, default the commit's time); prints its digest
image:
	IMAGE=$(IMAGE) VERSION=$(VERSION) hack/image/build.sh $(CURDIR)/bin/image

## image-push: make image, then push it to IMAGE (make image-push IMAGE=registry/repository:tag) with
## go-containerregistry and the credentials of your Docker configuration (docker login, credential helpers)
image-push: image
	cd hack/image && $(GO) run . push -layout $(CURDIR)/bin/image -image $(IMAGE)

## image-docker: the same image from the Dockerfile, for those with a Docker engine
image-docker:
	docker build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

## chart-check: helm lint + template (default, all-features and Kueue-integration values; both Kueue
## modes refused), then the rendered-manifest tests
chart-check:
	hack/helm-check.sh $(CURDIR)/.cache/chart-rendered
	SPARKHOOKS_RENDERED_DIR=$(CURDIR)/.cache/chart-rendered $(GO) test -count=1 ./deploy/deploytest/

## memload: build the server, send it rounds of 16 concurrent 30 MB sync requests on loopback and
## report its peak memory and the status codes (hack/memload; a measurement, not a test)
memload:
	$(GO) run ./hack/memload

## e2e: end-to-end tests on the real control plane (make kube) with the chart installed by Helm (make
## helm), Metacontroller from METACONTROLLER_BIN or the stand-in, kubectl as the user. The real-Spark
## suite (sandbox/e2e/spark) is split in two: its REALNODE_TESTS run on the real node (make node,
## docs/real-node.md; the hook server from make image's bin/image.tar, as a cluster runs it), side
## by side where they call parallelOnRealNode, and only there; the rest
## run one at a time on the process kubelet (root; see docs/process-kubelet.md and docs/local.md),
## which make run's own tests (sandbox/e2e/local) also use. `make e2e E2EFLAGS=-race` (what CI runs)
## runs the tests and the server binary under the race detector. The suites that mostly wait on
## their clusters go first, side by side (together they keep two cores about 80 % busy, each alone
## under half): the contract suite (sandbox/e2e) under the stand-in and, when METACONTROLLER_BIN is
## set, under the real Metacontroller, and the kubectl spark suite. Then the Spark suites, one package
## at a time: their JVMs need both cores.
REALNODE_TESTS = ^(TestSparkPi|TestPySparkPi|TestSparkConnect|TestSparkUI|TestKubectlSpark|TestKubectlSparkWatch|TestPodSandbox|TestLimitsAreEnforced|TestClusterDNSAndServiceIPs|TestExecutorOOMKilled|TestFailingDriverIsRetriedThenFailed|TestDynamicAllocation|TestKubeflowSDK|TestSparkClusterRunsSparkPi|TestKueueAdmitsOneAtATime|TestHookServerRunsTheBuiltImage)$$
e2e: spark-images image
	fixtures=$$(hack/test-fixtures/build.sh) && export $$fixtures && \
	export SPARKHOOKS_KUEUE_BINARY="$$(hack/kueue/build.sh)" KUBE_BIN_DIR="$$(hack/kube/build.sh)" HELM="$$(hack/helm/build.sh)" && \
	export SPARKHOOKS_NODE_DIR="$$(hack/node/build.sh)" SPARKHOOKS_GATEWAY_API_CRDS="$$(hack/gateway-api/build.sh)" && \
	export SPARKHOOKS_AIRFLOW_DIR="$$(hack/airflow/build.sh)" SPARKHOOKS_CHAINSAW="$$(hack/chainsaw/build.sh)" && \
	cd sandbox && { \
		metacontroller=; status=0; \
		if [ -n "$$METACONTROLLER_BIN" ]; then \
			SPARKHOOKS_E2E_CONTROLLER=metacontroller $(GO) test $(E2EFLAGS) -tags e2e -count=1 -timeout 20m ./e2e/ & metacontroller=$$!; fi; \
		$(GO) test $(E2EFLAGS) -tags e2e -count=1 -p 2 -timeout 20m ./internal/mcstandin/... ./internal/stack/... ./e2e/ ./e2e/harness/... ./e2e/sparkctl/ || status=$$?; \
		if [ -n "$$metacontroller" ]; then wait $$metacontroller || status=$$?; fi; \
		[ $$status = 0 ] && \
		$(GO) test $(E2EFLAGS) -tags e2e -count=1 -p 1 -timeout 40m -skip '$(REALNODE_TESTS)' ./e2e/local/ ./e2e/spark/ ./e2e/kubeflow/ && \
		SPARKHOOKS_E2E_NODE=containerd SPARKHOOKS_IMAGE_ARCHIVE=$(CURDIR)/bin/image.tar $(GO) test $(E2EFLAGS) -tags e2e -count=1 -parallel 4 -timeout 30m -run '$(REALNODE_TESTS)' ./e2e/spark/; }

## e2e-kubeflow: the differential suite over its whole corpus (sandbox/e2e/kubeflow): each
## SparkApplication run with real Spark under sparkhooks and the real Metacontroller, then under the
## Kubeflow Spark Operator's own chart, on one cluster, and every difference checked against
## docs/kubeflow-compat.md (make e2e runs the corpus' CI subset). Needs root, METACONTROLLER_BIN and
## KUBEFLOW_SPARK_OPERATOR (found in ../shared). Then the live switch-over with applications running, from
## Kubeflow's operator to sparkhooks and back (docs/migrate-from-kubeflow.md).
e2e-kubeflow: spark-images
	@[ -n "$$METACONTROLLER_BIN" ] && [ -n "$$KUBEFLOW_SPARK_OPERATOR" ] || { echo "e2e-kubeflow: METACONTROLLER_BIN and KUBEFLOW_SPARK_OPERATOR must name Metacontroller and the Kubeflow Spark Operator's release" >&2; exit 1; }
	export KUBE_BIN_DIR="$$(hack/kube/build.sh)" HELM="$$(hack/helm/build.sh)" && \
	cd sandbox && SPARKHOOKS_KUBEFLOW_CORPUS=all $(GO) test $(E2EFLAGS) -tags e2e -count=1 -timeout 120m -v -run '^(TestSameApplicationsUnderBothOperators|TestSwitchOverWithRunningApplications)$$' ./e2e/kubeflow/

## e2e-apache: the Apache Spark Kubernetes Operator 1.0.0's own e2e suite (APACHE_SPARK_OPERATOR's
## tests/e2e, unchanged) run by chainsaw against the real control plane, Metacontroller, the chart and
## real Spark on the process kubelet: every test, each to the result docs/apache.md records (make
## e2e runs the ones that pass); and every example of its examples/ that runs here, the slow ones too
e2e-apache: spark-images
	@[ -n "$$METACONTROLLER_BIN" ] && [ -n "$$APACHE_SPARK_OPERATOR" ] || { echo "e2e-apache: METACONTROLLER_BIN and APACHE_SPARK_OPERATOR must name Metacontroller and the Apache Spark Kubernetes Operator 1.0.0's source tree" >&2; exit 1; }
	export KUBE_BIN_DIR="$$(hack/kube/build.sh)" HELM="$$(hack/helm/build.sh)" SPARKHOOKS_CHAINSAW="$$(hack/chainsaw/build.sh)" && \
	cd sandbox && SPARKHOOKS_APACHE_E2E=all $(GO) test $(E2EFLAGS) -tags e2e -count=1 -timeout 60m -run '^(TestApacheChainsaw|TestApacheExamples)$$' -v ./e2e/spark/

## chainsaw: Kyverno Chainsaw (github.com/kyverno/chainsaw, pinned), which runs Apache's e2e suite,
## built once per user into ~/.cache/sparkhooks/chainsaw/<version>; prints its path
chainsaw:
	@hack/chainsaw/build.sh

## airflow: Apache Airflow 3.3.2 with its Kubernetes provider (SparkKubernetesOperator and Sensor),
## pinned with hashes in hack/airflow/requirements.txt, in a venv once per user into
## ~/.cache/sparkhooks/airflow/<key>, with Airflow's own Spark examples and a migrated metadata
## database (docs/airflow.md); prints the directory
airflow:
	@hack/airflow/build.sh

## golangci-lint: the linter make lint runs (github.com/golangci/golangci-lint/v2, pinned in
## hack/golangci-lint/build.sh), built in its own module once per user into
## ~/.cache/sparkhooks/golangci-lint; prints its path
golangci-lint:
	@hack/golangci-lint/build.sh

## kueue: the Kueue controller (sigs.k8s.io/kueue/cmd/kueue, pinned) the Kueue e2e test runs,
## built in its own module once per user into ~/.cache/sparkhooks/kueue; prints its path
kueue:
	@hack/kueue/build.sh

## gateway-api: the Gateway API CRDs (sigs.k8s.io/gateway-api, pinned in hack/gateway-api/build.sh) the
## e2e cluster serves, once per user into ~/.cache/sparkhooks/gateway-api/<version>; prints the directory
gateway-api:
	@hack/gateway-api/build.sh

## kube: kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kube-proxy (k8s.io/kubernetes,
## pinned in hack/kube/go.mod) and Helm, one go build once per user into
## ~/.cache/sparkhooks/kube/<version>-<key of hack/kube>; prints the directory
kube:
	@hack/kube/build.sh

## node: what the real node runs (docs/real-node.md): kubelet and kube-proxy (make kube), containerd,
## runc and the CNI plugins (Debian, installed when missing as root), CoreDNS and the pause program
## (pinned in hack/node/go.mod) and the Spark images' Debian base layer; once per user into
## ~/.cache/sparkhooks/node; prints the directory
node:
	@hack/node/build.sh

## helm: the Helm client (helm.sh/helm/v4, pinned in hack/kube/go.mod), built with make kube; prints its path
helm:
	@hack/helm/build.sh

## test-fixtures: what the kubectl spark and History Server e2e tests stage to and run (MinIO,
## fake-gcs-server, the GCS and S3A connectors), pinned in hack/test-fixtures/build.sh, once per user;
## prints the variables make e2e exports
test-fixtures:
	@hack/test-fixtures/build.sh

## spark-images: local stand-ins for the apache/spark 3.5.3, 4.0.1, 4.2.0 and 4.3.0 images (filesystem layers
## over the host's root, and images.json) plus the Spark Connect and Kubeflow SDK client venvs, in
## .cache/spark-images (SPARK_IMAGES_DIR), ahead of the sandbox's pulls; see hack/spark-images/README.md
spark-images:
	hack/spark-images/build.sh
