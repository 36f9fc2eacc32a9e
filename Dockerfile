# The orchestrator worker for deployment (docker-compose.yml). The Ray cluster it drives runs
# elsewhere (KubeRay) or, for the local backend, inside this container.
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv python3-pip git && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json requirements.txt ./
COPY payload ./payload
COPY scripts ./scripts
# Runtime requirements only (requirements.txt): no test server, MLflow server or pytest
# (requirements-test.txt), no Debian test packages.
RUN PYTHON=python3 RAGEN_SETUP_TEST_TOOLS=0 bash scripts/setup.sh
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Probes travel with their Ray jobs as runtime_env py_modules packages built from this directory.
COPY probes ./probes
COPY search ./search
# tsc into dist/, then the workflow code bundled once into dist/worker/workflow-bundle.js, which the
# worker loads at start instead of bundling (see bench/worker-start.ts). Then the build's tools and
# the tests' packages (devDependencies: TypeScript, @temporalio/testing, ...) leave the image.
RUN npm run build && npm prune --omit=dev --no-audit --no-fund
# Connection settings as the `temporal` CLI reads them: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
# TEMPORAL_API_KEY, TEMPORAL_TLS*, or a profile file (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE).
ENV TEMPORAL_ADDRESS=temporal:7233
# JSON log lines on stdout (pino): level, time, msg, and workflowId/stage/attempt where known.
# /metrics, /healthz, /readyz (RAGEN_METRICS_PORT).
EXPOSE 9464
CMD ["node", "dist/worker/worker.js"]
