#!/usr/bin/env bash
# Idempotent setup: npm ci, the Python venv (.venv) with exact pins, and the payload.
# A second run with nothing changed only compares hashes and returns in well under 10 s.
# RAGEN_SETUP_TEST_TOOLS=0 (the worker image, Dockerfile) installs what the orchestrator runs with
# only: requirements.txt, not requirements-test.txt, and none of the Debian test packages below.
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

# Python venv: rebuild the installed set only when a pin, the payload's metadata or the set of
# requirement files changed (the test pins are part of the hash only where they are installed).
py_requirements=(requirements.txt)
if [ "${RAGEN_SETUP_TEST_TOOLS:-1}" != 0 ]; then py_requirements+=(requirements-test.txt); fi
py_hash="$(hash_of "${py_requirements[@]}" payload/pyproject.toml)"
if [ "$(cat .venv/.setup-hash 2>/dev/null)" != "$py_hash" ]; then
  if [ ! -x .venv/bin/python ]; then
    echo "setup: creating .venv with $python_bin"
    "$python_bin" -m venv .venv
  fi
  echo "setup: pip install (exact pins)"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${py_requirements[@]/#/--requirement=}"
  if [ -f payload/pyproject.toml ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e payload
  fi
  echo "$py_hash" > .venv/.setup-hash
fi
# The verify tests run a real OCI registry (Distribution, Debian's docker-registry) and make its
# bcrypt htpasswd file with apache2-utils' htpasswd. The package's service is not started (no
# systemd here); the tests start their own registries on loopback ports.
# The kuberay tests run `kubectl` against the test kube-apiserver (Debian's kubernetes-client,
# unless a kubectl is already installed) and the KubeRay operator's readiness probes run `wget`
# in the Pods (the stand-in kubelet runs them on this machine); `ip`, `nsenter` and `unshare`
# (iproute2, util-linux) give each Pod its network namespace.
# Reports and the Temporal UI are checked in Debian's headless `chromium` (driven by puppeteer-core).
# The production-topology test runs Temporal on Debian's PostgreSQL (its own initdb and port; the
# package's own cluster is not used).
# RAGEN_SETUP_TEST_TOOLS=0 skips them (the worker image, Dockerfile).
test_packages=()
command -v docker-registry >/dev/null || test_packages+=(docker-registry)
command -v htpasswd >/dev/null || test_packages+=(apache2-utils)
command -v kubectl >/dev/null || test_packages+=(kubernetes-client)
command -v wget >/dev/null || test_packages+=(wget)
command -v ip >/dev/null || test_packages+=(iproute2)
command -v chromium >/dev/null || test_packages+=(chromium)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || test_packages+=(postgresql)
if [ "${RAGEN_SETUP_TEST_TOOLS:-1}" != 0 ] && [ ${#test_packages[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: apt-get install ${test_packages[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${test_packages[@]}" >/dev/null 2>&1 \
      || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${test_packages[@]}" >/dev/null; }
  else
    # Only the registry and kuberay tests need them; running experiments does not.
    echo "setup: warning: missing ${test_packages[*]}: the registry and kuberay tests need these Debian packages (install them as root)" >&2
  fi
fi
echo "setup: ready (.venv, node_modules)"
