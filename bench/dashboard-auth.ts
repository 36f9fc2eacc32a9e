/**
 * Benchmark: what Ray token authentication adds to one dashboard call. Two real local Ray heads
 * on this machine: one started by the local backend (RAY_AUTH_MODE=token, the token file it
 * writes) and one plain `ray start --head` with RAY_AUTH_MODE=disabled. Calls alternate between
 * them: GET /api/version (no token / with the token) and, as the activities do it, reading the
 * token from the backend (the 0600 file) and then calling. Prints the median of N (default 100)
 * each and the differences. Run it under the machine's Ray lock:
 *   flock /tmp/ray-test.lock npx tsx bench/dashboard-auth.ts [calls]
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LocalBackend } from '../src/backends/local/local-backend.js';
import { freePorts } from '../src/backends/local/ports.js';
import { signalProcessGroup } from '../src/backends/local/processes.js';
import { RayDashboardClient } from '../src/backends/ray/dashboard-client.js';
import { loadConfig } from '../src/config.js';
import { testSpec } from '../test/helpers/specs.js';

const calls = Number(process.argv[2] ?? 100);
const config = loadConfig();
const dir = await mkdtemp(join(tmpdir(), 'bench-auth-'));
const backend = new LocalBackend({
  runRoot: `/tmp/ro-ba-${process.pid}`,
  rayBin: config.rayBin,
  python: config.python,
  nodeIp: config.RAGEN_NODE_IP,
});
const base = testSpec({}, dir);
const spec = { ...base, cluster: { ...base.cluster, workerGroups: [] } };
const owner = { experiment: spec.name, workflowId: 'bench-auth', runId: 'r', attempt: 0 };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

// The plain head: token auth explicitly off.
const [gcsPort, dashPort] = (await freePorts(2)) as [number, number];
const plainTemp = `/tmp/ro-bp-${process.pid}`;
await mkdir(plainTemp, { recursive: true });
const plain = spawn(
  config.rayBin,
  [
    'start',
    '--head',
    '--block',
    `--port=${gcsPort}`,
    `--dashboard-port=${dashPort}`,
    '--dashboard-host=127.0.0.1',
    `--node-ip-address=${config.RAGEN_NODE_IP}`,
    '--num-cpus=1',
    `--temp-dir=${plainTemp}`,
    '--disable-usage-stats',
  ],
  {
    detached: true,
    stdio: 'ignore',
    env: { ...process.env, RAY_AUTH_MODE: 'disabled', RAY_AUTH_TOKEN: undefined },
  },
);
const handle = await backend.createCluster({ name: 'bench-auth-a0', spec, owner });
try {
  const open = new RayDashboardClient(`http://127.0.0.1:${dashPort}`);
  for (let i = 0; ; i++) {
    try {
      await open.rayVersion();
      break;
    } catch (err) {
      if (i > 180) throw err;
      await sleep(500);
    }
  }
  const url = handle.dashboardUrl ?? '';
  const token = await backend.dashboardToken(handle);
  const authed = new RayDashboardClient(url, token);
  for (let i = 0; i < 10; i++) await Promise.all([open.rayVersion(), authed.rayVersion()]); // warm up
  const plainMs: number[] = [];
  const tokenMs: number[] = [];
  const resolvedMs: number[] = [];
  const readMs: number[] = [];
  for (let i = 0; i < calls; i++) {
    plainMs.push(await timed(() => open.rayVersion()));
    tokenMs.push(await timed(() => authed.rayVersion()));
    readMs.push(await timed(() => backend.dashboardToken(handle)));
    resolvedMs.push(
      await timed(async () => new RayDashboardClient(url, await backend.dashboardToken(handle)).rayVersion()),
    );
  }
  const m = {
    plain: median(plainMs),
    token: median(tokenMs),
    resolved: median(resolvedMs),
    read: median(readMs),
  };
  console.log(`dashboard GET /api/version, median of ${calls} each (ms):`);
  console.log(`  auth disabled head, no token          ${m.plain.toFixed(3)}`);
  console.log(
    `  token head, Bearer token              ${m.token.toFixed(3)}  (+${(m.token - m.plain).toFixed(3)})`,
  );
  console.log(
    `  token head, token read then call      ${m.resolved.toFixed(3)}  (+${(m.resolved - m.plain).toFixed(3)})`,
  );
  console.log(`  token file read alone (dashboardToken) ${m.read.toFixed(3)}`);
} finally {
  await backend.deleteCluster(handle);
  if (plain.pid) signalProcessGroup(plain.pid, 'SIGTERM');
  await sleep(3000);
  if (plain.pid) signalProcessGroup(plain.pid, 'SIGKILL');
  await rm(plainTemp, { recursive: true, force: true });
  await rm(`/tmp/ro-ba-${process.pid}`, { recursive: true, force: true });
  await rm(dir, { recursive: true, force: true });
}
