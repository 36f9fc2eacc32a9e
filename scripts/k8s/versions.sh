# Versions and cache paths of the Kubernetes test environment (sourced by the k8s scripts).
K8S_VERSION="${K8S_VERSION:-v1.35.4}"
K8S_MINOR="35"
ETCD_VERSION="${ETCD_VERSION:-v3.6.16}"
KUBERAY_VERSION="${KUBERAY_VERSION:-v1.5.0}"
# Kueue (queueing and preemption of RayClusters in the kube tests): its go.mod says go 1.25, no replaces.
KUEUE_VERSION="${KUEUE_VERSION:-v0.17.0}"
# kustomize renders deploy/worker in the tests; v5.8.0 is the newest that builds with Go 1.24 (v5.8.1+ need Go 1.27).
KUSTOMIZE_VERSION="${KUSTOMIZE_VERSION:-v5.8.0}"
RAGEN_CACHE="${RAGEN_CACHE:-$HOME/.cache/ragen-orchestrator}"
K8S_CACHE="$RAGEN_CACHE/k8s"
K8S_BIN="$K8S_CACHE/k8s-$K8S_VERSION-etcd-$ETCD_VERSION/bin"
KUBERAY_BIN="$K8S_CACHE/kuberay-$KUBERAY_VERSION/bin"
KUSTOMIZE_BIN="$K8S_CACHE/kustomize-$KUSTOMIZE_VERSION/bin"
KUEUE_BIN="$K8S_CACHE/kueue-$KUEUE_VERSION/bin"
