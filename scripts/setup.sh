#!/usr/bin/env bash
# Idempotent setup: npm ci, the Python venv (.venv) with exact pins, and the payload.
# A second run with nothing changed only compares hashes and returns in well under 10 s.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
python_bin="${PYTHON:-python3.11}"

# Missing files hash as empty, so the first run (before payload/ exists) works too.
hash_of() { for f in "$@"; do if [ -f "$f" ]; then cat "$f"; fi; done | sha256sum | cut -c1-16; }

# Node dependencies: reinstall only when the lockfile changed.
if [ -f package-lock.json ]; then
  node_hash="$(hash_of package-lock.json)"
  if [ "$(cat node_modules/.setup-hash 2>/dev/null)" != "$node_hash" ]; then
    echo "setup: npm ci"
    npm ci --no-audit --no-fund --loglevel=error
    echo "$node_hash" > node_modules/.setup-hash
  fi
fi

# Python venv: rebuild the installed set only when a pin or the payload's metadata changed.
py_hash="$(hash_of requirements.txt payload/pyproject.toml)"
if [ "$(cat .venv/.setup-hash 2>/dev/null)" != "$py_hash" ]; then
  if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $python_bin"
    "$python_bin" -m venv .venv
  fi
  echo "setup: pip install (exact pins)"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
  if [ -f payload/pyproject.toml ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e payload
  fi
  echo "$py_hash" > .venv/.setup-hash
fi
# The verify tests run a real OCI registry (Distribution, Debian's docker-registry) and make its
# bcrypt htpasswd file with apache2-utils' htpasswd. The package's service is not started (no
# systemd here); the tests start their own registries on loopback ports.
# RAGEN_SETUP_TEST_TOOLS=0 skips them (the deployment image, Dockerfile).
if [ "${RAGEN_SETUP_TEST_TOOLS:-1}" != 0 ] && { ! command -v docker-registry >/dev/null || ! command -v htpasswd >/dev/null; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: apt-get install docker-registry apache2-utils"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends docker-registry apache2-utils >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq --no-install-recommends docker-registry apache2-utils >/dev/null; }
  else
    # Only the registry tests need them; running experiments does not.
    echo "setup: warning: docker-registry or htpasswd is missing; the registry tests need the Debian packages docker-registry and apache2-utils (install them as root)" >&2
  fi
fi
echo "setup: ready (.venv, node_modules)"
