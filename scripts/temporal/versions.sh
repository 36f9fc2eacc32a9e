# Versions and cache paths of the production-topology test environment: the Temporal server and
# its schema tool built from the Go module proxy, on Debian's PostgreSQL (sourced by the temporal
# scripts; test/unit/topology-versions.test.ts checks docker-compose.yml agrees with it).
TEMPORAL_SERVER_VERSION="${TEMPORAL_SERVER_VERSION:-v1.32.2}"
# v1.32 needs Go >= 1.26.10; the Go command fetches this toolchain from the module proxy.
TEMPORAL_GO_TOOLCHAIN="${TEMPORAL_GO_TOOLCHAIN:-go1.27.3}"
# Debian bookworm's PostgreSQL major (apt `postgresql`); the server's plugin is postgres12.
POSTGRES_MAJOR="15"
RAGEN_CACHE="${RAGEN_CACHE:-$HOME/.cache/ragen-orchestrator}"
TEMPORAL_CACHE="$RAGEN_CACHE/temporal"
TEMPORAL_BIN="$TEMPORAL_CACHE/server-$TEMPORAL_SERVER_VERSION/bin"
