#!/usr/bin/env bash
# Builds SeaweedFS's `weed` (the S3 server the object-store tests run against) from the Go module
# proxy into a cache outside the clone. Warm: exits at once when the binary exists.
set -euo pipefail
source "$(dirname "$0")/versions.sh"

export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS=-mod=mod

command -v go >/dev/null || { echo "Go is required to build SeaweedFS (install Go >= 1.21; it fetches the toolchain the module asks for)" >&2; exit 1; }

mkdir -p "$SEAWEEDFS_BIN"
if [[ -x "$SEAWEEDFS_BIN/weed" ]]; then
  echo "SeaweedFS weed present in $SEAWEEDFS_BIN"
  exit 0
fi

start=$(date +%s)
work="$SEAWEEDFS_CACHE/build"
mkdir -p "$work"
log="$work/build.log"
: > "$log"
fail() { echo "SeaweedFS build failed: $1; the end of $log:" >&2; tail -30 "$log" >&2; exit 1; }

rm -rf "$work/weed" && mkdir -p "$work/weed" && cd "$work/weed"
go mod init ragen-seaweedfs >>"$log" 2>&1
go get "github.com/seaweedfs/seaweedfs/weed@$SEAWEEDFS_VERSION" >>"$log" 2>&1 || fail "go get"
go build -trimpath -ldflags "-s -w" -o "$SEAWEEDFS_BIN/weed.tmp" github.com/seaweedfs/seaweedfs/weed >>"$log" 2>&1 || fail "go build"
mv "$SEAWEEDFS_BIN/weed.tmp" "$SEAWEEDFS_BIN/weed"
echo "built SeaweedFS weed $SEAWEEDFS_VERSION in $(( $(date +%s) - start ))s"
