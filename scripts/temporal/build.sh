#!/usr/bin/env bash
# Builds the Temporal server and its schema tool (temporal-sql-tool) from the Go module proxy into
# a cache outside the clone. Warm: exits at once when both exist.
# Nothing built lands in the repo. The PostgreSQL schemas are read from the module cache at test time.
set -euo pipefail
source "$(dirname "$0")/versions.sh"

export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS=-mod=mod
export GOTOOLCHAIN="$TEMPORAL_GO_TOOLCHAIN"

command -v go >/dev/null || { echo "Go is required to build the Temporal server (install Go >= 1.21; it fetches $TEMPORAL_GO_TOOLCHAIN)" >&2; exit 1; }

# The schemas come from the module cache, never from the repo. Also when the binaries are cached:
# the module cache may have been cleaned on its own.
go mod download -json "go.temporal.io/server@$TEMPORAL_SERVER_VERSION" >/dev/null

mkdir -p "$TEMPORAL_BIN"
if [[ -x "$TEMPORAL_BIN/temporal-server" && -x "$TEMPORAL_BIN/temporal-sql-tool" ]]; then
  echo "Temporal server binaries present in $TEMPORAL_BIN"
  exit 0
fi

start=$(date +%s)
work="$TEMPORAL_CACHE/build"
mkdir -p "$work"
log="$work/build.log"
: > "$log"
fail() { echo "Temporal build failed: $1; the end of $log:" >&2; tail -30 "$log" >&2; exit 1; }

if [[ ! -x "$TEMPORAL_BIN/temporal-server" || ! -x "$TEMPORAL_BIN/temporal-sql-tool" ]]; then
  rm -rf "$work/server" && mkdir -p "$work/server" && cd "$work/server"
  go mod init ragen-temporal-server >>"$log" 2>&1
  go get "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" \
    "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" >>"$log" 2>&1 || fail "go get"
  # One after the other: the schema tool reuses the server's build cache and takes seconds.
  go build -trimpath -ldflags "-s -w" -o "$TEMPORAL_BIN/temporal-server.tmp" go.temporal.io/server/cmd/server >>"$log" 2>&1 || fail "temporal-server"
  go build -trimpath -ldflags "-s -w" -o "$TEMPORAL_BIN/temporal-sql-tool.tmp" go.temporal.io/server/cmd/tools/sql >>"$log" 2>&1 || fail "temporal-sql-tool"
  mv "$TEMPORAL_BIN/temporal-server.tmp" "$TEMPORAL_BIN/temporal-server"
  mv "$TEMPORAL_BIN/temporal-sql-tool.tmp" "$TEMPORAL_BIN/temporal-sql-tool"
fi
echo "built temporal-server and temporal-sql-tool $TEMPORAL_SERVER_VERSION in $(( $(date +%s) - start ))s"
