import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeNewAuthToken } from '../../src/backends/local/auth-token.js';
import { startHead, stopCluster } from '../../src/backends/local/launcher.js';
import { freePorts } from '../../src/backends/local/ports.js';
import type { LocalClusterState } from '../../src/backends/local/state.js';
import { loadConfig } from '../../src/config/config.js';

/**
 * A real one-node Ray cluster (head only, the venv's Ray, started and stopped by the local
 * backend's launcher) for benches that run a real Ray job. Run under the shared Ray lock.
 */
export async function withRayHead<T>(
  fn: (dashboardUrl: string, tempDir: string, token: string) => Promise<T>,
): Promise<T> {
  const config = loadConfig(process.env);
  const dir = await mkdtemp(join(tmpdir(), 'ro-bench-'));
  const [gcsPort, dashboardPort] = (await freePorts(2)) as [number, number];
  const state: LocalClusterState = {
    name: `bench-${process.pid}`,
    owner: { experiment: 'bench', workflowId: 'bench', runId: 'bench', attempt: 0 },
    createdAt: new Date().toISOString(),
    nodeIp: config.RAGEN_NODE_IP,
    gcsPort,
    dashboardUrl: `http://127.0.0.1:${dashboardPort}`,
    tempDir: `/tmp/rb${process.pid}`,
    complete: false,
    nodes: [],
  };
  try {
    // Ray 2.52+ starts in token mode as the local backend does: the token is written first.
    const token = await writeNewAuthToken(dir);
    state.nodes.push(await startHead({ rayBin: config.rayBin, nodeIp: config.RAGEN_NODE_IP }, state, dir, 2));
    return await fn(state.dashboardUrl, state.tempDir, token);
  } finally {
    const left = await stopCluster(state);
    if (left.length > 0) console.error(`ray processes left: ${left.join(' ')}`);
    await rm(dir, { recursive: true, force: true });
    await rm(state.tempDir, { recursive: true, force: true });
  }
}
