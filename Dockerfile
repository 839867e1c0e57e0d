# syntax=docker/dockerfile:1
# The sparkhooks image: one static binary on distroless, running as non-root with nothing to write.
#   docker build --build-arg VERSION=$(git describe --tags --always) -t ghcr.io/sparkhooks/sparkhooks .
# (make image-docker does this.) make image builds the same image with no Docker engine
# (hack/image); hack/image/image_test.go reads this file's final stage (base, USER, ENTRYPOINT, CMD,
# EXPOSE, COPY) and fails when it and hack/image disagree: change both together.

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
# Dependencies first, so that a source change does not download the modules again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/sparkhooks ./cmd/sparkhooks && \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w" -o /out/kubectl-spark ./cmd/kubectl-spark

# static-debian12 holds CA certificates, tzdata and /etc/passwd entries for nonroot (65532), and
# no shell or package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sparkhooks /sparkhooks
# The kubectl plugin, for `docker cp` or an init container that puts it on a PATH
# (docs/sparkctl.md).
COPY --from=build /out/kubectl-spark /kubectl-spark
USER 65532:65532
# 8080: hooks, probes, metrics; 8443: the admission webhook (TLS).
EXPOSE 8080 8443
ENTRYPOINT ["/sparkhooks"]
CMD ["serve"]
