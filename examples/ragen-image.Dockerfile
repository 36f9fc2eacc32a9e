# Example: the image a KubeRay experiment runs (RAGEN + verl on the rayproject base). The Ray in
# the image must be the spec's rayVersion; the verify stage reads it from the io.ray.version
# label (or RAY_VERSION in the image's Env) before any cluster is created, so state it here and
# keep it equal to the base image's Ray. Build, push, then pin the digest in the spec:
#   docker buildx build --platform linux/amd64 -f examples/ragen-image.Dockerfile -t REGISTRY/ragen:2.60.0 --push .
#   docker buildx imagetools inspect REGISTRY/ragen:2.60.0   # -> image: REGISTRY/ragen:2.60.0@sha256:…
ARG RAY_VERSION=2.60.0
FROM rayproject/ray:${RAY_VERSION}-py311-gpu
ARG RAY_VERSION
LABEL io.ray.version="${RAY_VERSION}"
ENV RAY_VERSION="${RAY_VERSION}"
# RAGEN at a fixed commit, with its verl submodule. The verify stage reads these labels and the
# manifest records them as the trained code's commits (src/registry/code-labels.ts):
# org.opencontainers.image.revision/source (OCI), ai.ragen.commit and io.verl.commit.
ARG RAGEN_COMMIT
ARG VERL_COMMIT
LABEL org.opencontainers.image.source="https://github.com/mll-lab-nu/RAGEN" \
      org.opencontainers.image.revision="${RAGEN_COMMIT}" \
      ai.ragen.commit="${RAGEN_COMMIT}" \
      io.verl.commit="${VERL_COMMIT}"

RUN git clone https://github.com/mll-lab-nu/RAGEN.git /opt/ragen \
 && cd /opt/ragen && git checkout "${RAGEN_COMMIT}" && git submodule update --init --recursive \
 && pip install --no-cache-dir -e . -e ./verl "ray[default]==${RAY_VERSION}"
# `python train.py` (the kuberay default entrypoint) runs here: Ray starts its job drivers in the
# directory `ray start` ran in, the container's working directory (read from Ray's source, not run
# on a cluster here: check with `ray job submit -- pwd` on a new image).
WORKDIR /opt/ragen
