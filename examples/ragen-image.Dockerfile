# Example: the image a KubeRay experiment runs (RAGEN + verl 0.6.1 on the rayproject base), following
# RAGEN's own install (scripts/setup_ragen.sh at RAGEN 20daedc): Python 3.12, RAGEN installed with
# --no-deps, verl's dependencies from verl's own install script (vllm 0.11.0, torch, flash-attn
# 2.8.1 for cp312/torch 2.8), then verl with --no-deps, RAGEN's release dependencies with
# numpy 1.26.4, and last `ray[default]==<rayVersion>` (verl's script installs an unpinned Ray).
#
# NOT BUILT HERE: the project's machine has no container runtime. What checks an image is the
# environment probe, which runs on every node right after join (docs/bring-your-own-image.md lists
# each item it checks); a run on an image that misses one fails at once with ImageContractUnmet.
#
# The Ray in the image must be the spec's rayVersion; the verify stage reads it from the
# io.ray.version label (or RAY_VERSION in the image's Env) before any cluster is created, so state
# it here and keep it equal to the Ray installed last. Build, push, then pin the digest in the spec:
#   docker buildx build --platform linux/amd64 -f examples/ragen-image.Dockerfile \
#     --build-arg RAGEN_COMMIT=<40-hex> --build-arg VERL_COMMIT=<40-hex> -t REGISTRY/ragen:2.60.0 --push .
#   docker buildx imagetools inspect REGISTRY/ragen:2.60.0   # -> image: REGISTRY/ragen:2.60.0@sha256:…
#
# The image's user: rayproject images run as `ray`, uid 1000, gid 100 (users), with Python in
# /home/ray/anaconda3 (on the default PATH, where KubeRay's `ray start` finds `ray`). Set
# kuberay.securityContext to runAsUser 1000 / runAsGroup 100 / fsGroup 100 so the Pods and the shared
# volume agree. bash and wget (KubeRay's probes) come with the base image.
ARG RAY_VERSION=2.60.0
FROM rayproject/ray:${RAY_VERSION}-py312-cu128
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

# The checkout lives at the example's kuberay.head/workers.workingDir; /workspace is root's, so it
# is made for the image's user first (uid 1000 cannot create directories under /).
USER root
RUN mkdir -p /workspace && chown 1000:100 /workspace
USER 1000:100

RUN git clone https://github.com/mll-lab-nu/RAGEN.git /workspace/RAGEN \
 && cd /workspace/RAGEN && git checkout "${RAGEN_COMMIT}" && git submodule update --init --recursive
WORKDIR /workspace/RAGEN

# As setup_ragen.sh: setuptools, RAGEN without its pinned dependencies (its vllm==0.8.2 is below
# verl 0.6.1's floor), verl's dependencies from verl's script without Megatron (it pins vllm 0.11.0
# and installs flash-attn 2.8.1), verl itself without dependencies.
RUN pip install --no-cache-dir setuptools \
 && pip install --no-cache-dir --no-deps -e . \
 && cd verl && USE_MEGATRON=0 bash scripts/install_vllm_sglang_mcore.sh \
 && pip install --no-cache-dir --no-deps -e .
RUN pip install --no-cache-dir IPython matplotlib gym gym_sokoban gymnasium "gymnasium[toy-text]" \
      debugpy together anthropic faiss-cpu==1.11.0 numpy==1.26.4 \
 && pip install --no-cache-dir "setuptools<70.0.0"
# RAGEN's data, as its setup downloads it (needs the network at build time).
RUN python scripts/download_data.py
# Last: the Ray the spec declares (verl's script installed whatever Ray was newest).
RUN pip install --no-cache-dir "ray[default]==${RAY_VERSION}" \
 && python -c "import ray; assert ray.__version__ == '${RAY_VERSION}', ray.__version__"
# (flash_attn's CUDA extension may not load without a GPU driver, so the build does not import it:
# the environment probe imports every module of imageContract.requires on the GPU nodes instead.)
# `python train.py` (the kuberay default entrypoint) runs in the directory `ray start` ran in, the
# container's working directory: the WORKDIR above, and kuberay.head.workingDir in the spec.
