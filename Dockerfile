# The orchestrator worker for deployment (docker-compose.yml). The Ray cluster it drives runs
# elsewhere (KubeRay) or, for the local backend, inside this container.
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv python3-pip git && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json requirements.txt ./
COPY payload ./payload
COPY scripts ./scripts
RUN PYTHON=python3 RAGEN_SETUP_TEST_TOOLS=0 bash scripts/setup.sh
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# Probes travel with their Ray jobs as runtime_env py_modules packages built from this directory.
COPY probes ./probes
RUN npx tsc -p tsconfig.build.json
ENV TEMPORAL_ADDRESS=temporal:7233
CMD ["node", "dist/worker.js"]
