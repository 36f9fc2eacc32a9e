#!/usr/bin/env bash
# Builds etcd, kube-apiserver, the KubeRay operator, Kueue and kustomize from the Go module proxy
# into a cache outside the clone, the five concurrently. Warm: exits at once when every binary exists.
# Nothing built lands in the repo.
# kube-apiserver needs a wrapper module: k8s.io/kubernetes requires its staging modules at
# v0.0.0 and maps them with relative replaces that Go ignores for dependencies, so we add
# `replace k8s.io/<staging> => k8s.io/<staging> v0.<minor>.<patch>` generated from its go.mod.
set -euo pipefail
source "$(dirname "$0")/versions.sh"

export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS=-mod=mod
export GOTOOLCHAIN=local

command -v go >/dev/null || { echo "Go is required to build the k8s test binaries (install Go >= 1.25)" >&2; exit 1; }

# The CRDs come from the KubeRay Go module in the module cache, never from the repo. Also when
# the binaries are cached: the module cache may have been cleaned on its own.
go mod download -json "github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION" >/dev/null
# Kueue's CRDs and webhook configurations likewise (config/components/{crd/bases,webhook}).
go mod download -json "sigs.k8s.io/kueue@$KUEUE_VERSION" >/dev/null

mkdir -p "$K8S_BIN" "$KUBERAY_BIN" "$KUEUE_BIN" "$KUSTOMIZE_BIN"
if [[ -x "$K8S_BIN/etcd" && -x "$K8S_BIN/kube-apiserver" && -x "$KUBERAY_BIN/kuberay-operator" && -x "$KUEUE_BIN/kueue" && -x "$KUSTOMIZE_BIN/kustomize" ]]; then
  echo "k8s test binaries present in $K8S_BIN, $KUBERAY_BIN and $KUEUE_BIN"
  exit 0
fi

start=$(date +%s)
work="$K8S_CACHE/build"
mkdir -p "$work"

build_etcd() {
  [[ -x "$K8S_BIN/etcd" ]] && return 0
  local dir="$work/etcd"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  go mod init ragen-k8s-etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  # etcd's own go.mod has relative replaces for its sibling modules; pin them to the same tag.
  for m in api/v3 client/pkg/v3 client/v3 pkg/v3 server/v3; do
    go mod edit -replace "go.etcd.io/etcd/$m=go.etcd.io/etcd/$m@$ETCD_VERSION"
  done
  go mod tidy >/dev/null 2>&1 || true
  go build -trimpath -o "$K8S_BIN/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$K8S_BIN/etcd.tmp" "$K8S_BIN/etcd"
}

build_apiserver() {
  [[ -x "$K8S_BIN/kube-apiserver" ]] && return 0
  local dir="$work/kube-apiserver"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  go mod init ragen-k8s-apiserver >/dev/null 2>&1
  local staging_version="v0.${K8S_VERSION#v1.}"
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  # Every staging module the target requires at v0.0.0 gets a replace to its published tag.
  grep -E '^\s+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "$gomod" | awk '{print $1}' | sort -u | while read -r m; do
    go mod edit -replace "$m=$m@$staging_version"
  done
  go get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION"
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_MINOR}"
  go build -trimpath -ldflags "$ldflags" -o "$K8S_BIN/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
  mv "$K8S_BIN/kube-apiserver.tmp" "$K8S_BIN/kube-apiserver"
}

build_operator() {
  # The real KubeRay operator: its main package is the module root and it has no replaces.
  [[ -x "$KUBERAY_BIN/kuberay-operator" ]] && return 0
  local dir="$work/kuberay-operator"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  go mod init ragen-kuberay-operator >/dev/null 2>&1
  go get "github.com/ray-project/kuberay/ray-operator@$KUBERAY_VERSION"
  go build -trimpath -ldflags "-s -w" -o "$KUBERAY_BIN/kuberay-operator.tmp" github.com/ray-project/kuberay/ray-operator
  mv "$KUBERAY_BIN/kuberay-operator.tmp" "$KUBERAY_BIN/kuberay-operator"
}

build_kueue() {
  # The real Kueue controller (main package cmd/kueue); its module has no replaces and needs Go 1.25.
  # Cold, alone (the other four binaries cached): 230 s on 2 cores at load 4.3 (another agent's
  # tests beside it), go get 11 s + go build 219 s; Go's build cache already held the k8s.io
  # packages the operator and apiserver builds share with it (a machine without them takes longer).
  [[ -x "$KUEUE_BIN/kueue" ]] && return 0
  local dir="$work/kueue"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  go mod init ragen-kueue >/dev/null 2>&1
  go get "sigs.k8s.io/kueue/cmd/kueue@$KUEUE_VERSION"
  local s=$(date +%s)
  go build -trimpath -ldflags "-s -w" -o "$KUEUE_BIN/kueue.tmp" sigs.k8s.io/kueue/cmd/kueue
  mv "$KUEUE_BIN/kueue.tmp" "$KUEUE_BIN/kueue"
  echo "kueue $KUEUE_VERSION built in $(( $(date +%s) - s ))s (go get excluded)"
}

build_kustomize() {
  # Renders deploy/worker (kubectl's built-in kustomize differs by kubectl version; this one is pinned).
  [[ -x "$KUSTOMIZE_BIN/kustomize" ]] && return 0
  local dir="$work/kustomize"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  go mod init ragen-kustomize >/dev/null 2>&1
  go get "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
  go build -trimpath -ldflags "-s -w" -o "$KUSTOMIZE_BIN/kustomize.tmp" sigs.k8s.io/kustomize/kustomize/v5
  mv "$KUSTOMIZE_BIN/kustomize.tmp" "$KUSTOMIZE_BIN/kustomize"
}

# Concurrently: each build waits on downloads as much as on the two cores.
pids=()
for step in build_etcd build_apiserver build_operator build_kueue build_kustomize; do
  ( "$step" > "$work/$step.log" 2>&1 ) &
  pids+=("$!")
done
failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    failed=1
    echo "k8s build step failed; its log:" >&2
  fi
done
for step in build_etcd build_apiserver build_operator build_kueue build_kustomize; do
  if [[ $failed == 1 ]]; then echo "== $step" >&2; tail -30 "$work/$step.log" >&2; fi
done
[[ $failed == 0 ]] || exit 1
echo "built etcd $ETCD_VERSION, kube-apiserver $K8S_VERSION, kuberay-operator $KUBERAY_VERSION, kueue $KUEUE_VERSION and kustomize $KUSTOMIZE_VERSION in $(( $(date +%s) - start ))s"
