#!/usr/bin/env bash
# Builds the CLI (compiled JavaScript and the prebuilt workflow bundle, `npm run build`) when a
# source file changed since the last build; returns at once otherwise. Shared by run-example.sh and
# the test that runs the README's main command (test/integration/readme-main-command.test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f dist/cli/main.js ] || [ -n "$(find src -newer dist/cli/main.js -print -quit)" ]; then
  nice -n 5 npm run build --silent
fi
