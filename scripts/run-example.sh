#!/usr/bin/env bash
# The README's main command: set up, then run the embedded default end to end (Temporal dev server
# from the venv, a worker in-process, a local Ray cluster, the Sokoban payload).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec npx tsx src/cli.ts run --embedded "${1:-examples/sokoban-local.yaml}"
