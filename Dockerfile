# syntax=docker/dockerfile:1
#
# Herald's container image: static producer and worker binaries on a
# distroless base (no shell, no package manager, CA certificates for the
# HTTPS Bot API), running as the unprivileged user 65532.
#
# Stages:
#   build     compiles both binaries (module and build caches are BuildKit
#             cache mounts, so rebuilds after a code change are quick)
#   runtime   both binaries, no entrypoint and no health check
#   worker    runtime + ENTRYPOINT worker + its HEALTHCHECK
#   producer  runtime + ENTRYPOINT producer + its HEALTHCHECK (the default
#             target, so a plain `docker build .` gives the producer)
#
# Every image holds both binaries; the role targets only add the entrypoint
# and the matching health check, because the two binaries answer health
# probes on different ports (HERALD_LISTEN :8080, HERALD_WORKER_LISTEN
# 127.0.0.1:9091) and a single image-wide HEALTHCHECK would be wrong for one
# of them.
# docker-compose.yml builds each service from its own target and repeats the
# health check there with compose's timings.
#
#   docker build -t herald-producer .
#   docker build -t herald-worker --target worker .
#
# Base images are pinned to exact versions: GO_VERSION is go.mod's toolchain
# (a test keeps them equal), and the runtime base, which has no version tags,
# is pinned by digest. To add or refresh a digest (needs registry access):
#
#   docker buildx imagetools inspect golang:1.26.11 --format '{{json .Manifest.Digest}}'
#   docker buildx imagetools inspect gcr.io/distroless/static-debian12:nonroot --format '{{json .Manifest.Digest}}'
#
# and write it after the tag as image:tag@sha256:<digest> (the multi-platform
# index digest, so --platform builds keep working). See docs/COMPOSE.md.

ARG GO_VERSION=1.26.11

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags="-s -w" -o /out/ ./cmd/producer ./cmd/worker

# distroless static, Debian 12, user nonroot (uid 65532), as of 2026-08.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab AS runtime
COPY --from=build /out/producer /usr/local/bin/producer
COPY --from=build /out/worker /usr/local/bin/worker
# Logs as JSON lines whatever the terminal; LOG_FORMAT=text in .env overrides.
ENV LOG_FORMAT=json
# 65532 is distroless's "nonroot" user; numeric so that runAsNonRoot checks
# can verify it without reading /etc/passwd.
USER 65532:65532

FROM runtime AS worker
# The worker serves health and metrics on 127.0.0.1:9091 by default, which
# its HEALTHCHECK reaches but nothing outside the container does: set
# HERALD_WORKER_LISTEN=:9091 for Prometheus (docker-compose.yml does).
EXPOSE 9091
ENTRYPOINT ["/usr/local/bin/worker"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/worker", "healthcheck"]

FROM runtime AS producer
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/producer"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/producer", "healthcheck"]
