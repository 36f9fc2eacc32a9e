#!/usr/bin/env bash
# The README's main command: set up, then run the embedded default end to end (Temporal dev server
# from the venv, a worker in-process, a local Ray cluster, the Sokoban payload). It runs the built
# CLI (compiled JavaScript, prebuilt workflow bundle: bin/ragen-orchestrator.js picks dist/ when it
# is newer than every source), building it first when a source file changed since the last build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-if-stale.sh
exec node bin/ragen-orchestrator.js run --embedded "${1:-examples/sokoban-local.yaml}"
