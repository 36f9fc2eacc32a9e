# Version and cache paths of the S3 test server: SeaweedFS (Apache-2.0) built from the Go module
# proxy (sourced by scripts/seaweedfs/build.sh and read by test/helpers/seaweedfs.ts).
# The module proxy serves no tagged release of github.com/seaweedfs/seaweedfs; this pseudo-version is
# one fixed commit, so the build is reproducible.
SEAWEEDFS_VERSION="${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
RAGEN_CACHE="${RAGEN_CACHE:-$HOME/.cache/ragen-orchestrator}"
SEAWEEDFS_CACHE="$RAGEN_CACHE/seaweedfs"
SEAWEEDFS_BIN="$SEAWEEDFS_CACHE/seaweedfs-$SEAWEEDFS_VERSION/bin"
