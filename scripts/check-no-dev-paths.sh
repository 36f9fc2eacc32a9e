#!/usr/bin/env bash
# Fails when a tracked file names a folder of a development machine by its absolute path: the
# workplace tree (/work), a person's home (/home/<user>, /Users/<user>, anything under /root), or a
# stack frame's absolute file path (a recorded history or log pasted from a run). Inputs such as
# mirrors or shared test data come from variables or arguments instead. Paths every machine or
# container has (/usr/bin, /dev, /proc, /tmp scratch folders, /mnt and /var/run in Pod templates)
# are not development folders and pass; the allow-list below names the few that would match.
# Usage: scripts/check-no-dev-paths.sh [repository root, default: this checkout]
set -euo pipefail
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"

before='(^|[^A-Za-z0-9_.~$/-])'
rules=(
  "${before}/work(/|\$|[^A-Za-z0-9_.-])"                         # the workplace tree
  "${before}/(home|Users)/[A-Za-z0-9_.-]+"                         # a person's home
  "${before}/root/[A-Za-z0-9_.-]+"                                 # inside root's home
  "(^|[[:space:](\"'])(file://)?/[^[:space:]():\"']+\.(ts|js|mjs|cjs|py):[0-9]+" # a stack frame
  "File \"/[^\"]+\", line [0-9]+"                                  # a Python traceback's frame
)
# Legitimate ones: the home of the `ray` user in rayproject images (a container path), and the
# placeholder user of the docs' examples.
allowed='/home/(ray|me)([^A-Za-z0-9_.-]|$)'

pattern="$(IFS='|'; echo "${rules[*]}")"
# This check, its test and the test of the recorder's stack cutting hold the very patterns they look for.
found="$(git -C "$root" grep -nIoE "$pattern" -- . ':!scripts/check-no-dev-paths.sh' \
  ':!test/unit/no-dev-paths.test.ts' ':!test/unit/stack-paths.test.ts' \
  | grep -vE "^[^:]+:[0-9]+:.*${allowed}" || true)"
if [[ -n $found ]]; then
  echo "check-no-dev-paths: tracked files name folders of a development machine (take them from a variable or an argument):" >&2
  echo "$found" >&2
  exit 1
fi
echo "check-no-dev-paths: no development folder named in $(git -C "$root" ls-files | wc -l) tracked files"
