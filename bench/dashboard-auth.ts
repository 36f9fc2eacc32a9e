/**
 * Benchmark: what Ray token authentication adds to one dashboard call. Two real Ray heads on this
 * machine, started with the same `ray start --head` arguments, one with the local backend's auth
 * environment (RAY_AUTH_MODE=token, RAY_AUTH_TOKEN_PATH to a 0600 token file) and one with
 * RAY_AUTH_MODE=disabled. Calls alternate between them: GET /api/version without a token / with
 * the token, and as the activities do it: read the token file (readAuthToken), then call. Prints
 * the median of N (default 100) each and the differences. Run it under the machine's Ray lock:
 *   flock /tmp/ray-test.lock npx tsx bench/dashboard-auth.ts [calls]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { rayAuthEnv, readAuthToken, writeNewAuthToken } from '../src/backends/local/auth-token.js';
import { freePorts } from '../src/backends/local/ports.js';
import { signalProcessGroup } from '../src/backends/local/processes.js';
import { RayDashboardClient } from '../src/backends/ray/dashboard-client.js';
import { loadConfig } from '../src/config/config.js';

const calls = Number(process.argv[2] ?? 100);
const config = loadConfig();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** A head with the given auth environment; resolves once its dashboard answers. */
async function head(dir: string, env: Record<string, string | undefined>, token?: string) {
  await mkdir(dir, { recursive: true });
  const [gcs, dash, client] = (await freePorts(3)) as [number, number, number];
  const proc = spawn(
    config.rayBin,
    [
      'start',
      '--head',
      '--block',
      `--port=${gcs}`,
      `--dashboard-port=${dash}`,
      '--dashboard-host=127.0.0.1',
      '--include-dashboard=true',
      `--ray-client-server-port=${client}`,
      `--node-ip-address=${config.RAGEN_NODE_IP}`,
      '--num-cpus=1',
      `--temp-dir=${dir}`,
      '--disable-usage-stats',
    ],
    { detached: true, stdio: 'ignore', env: { ...process.env, RAY_USAGE_STATS_ENABLED: '0', ...env } },
  );
  const dashboard = new RayDashboardClient(`http://127.0.0.1:${dash}`, token);
  for (let i = 0; ; i++) {
    try {
      await dashboard.rayVersion();
      return { proc, dashboard, url: `http://127.0.0.1:${dash}` };
    } catch (err) {
      if (i > 240) throw err;
      await sleep(500);
    }
  }
}

const root = `/tmp/ro-ba-${process.pid}`;
const procs: ChildProcess[] = [];
try {
  const authDir = `${root}/a`;
  await mkdir(authDir, { recursive: true });
  const token = await writeNewAuthToken(authDir);
  const plain = await head(`${root}/p`, { RAY_AUTH_MODE: 'disabled', RAY_AUTH_TOKEN: undefined });
  procs.push(plain.proc);
  const authed = await head(`${root}/t`, rayAuthEnv(authDir), token);
  procs.push(authed.proc);
  for (let i = 0; i < 20; i++)
    await Promise.all([plain.dashboard.rayVersion(), authed.dashboard.rayVersion()]);
  const ms = { plain: [] as number[], token: [] as number[], resolved: [] as number[], read: [] as number[] };
  for (let i = 0; i < calls; i++) {
    ms.plain.push(await timed(() => plain.dashboard.rayVersion()));
    ms.token.push(await timed(() => authed.dashboard.rayVersion()));
    ms.read.push(await timed(() => readAuthToken(authDir)));
    ms.resolved.push(
      await timed(async () => new RayDashboardClient(authed.url, await readAuthToken(authDir)).rayVersion()),
    );
  }
  const m = {
    plain: median(ms.plain),
    token: median(ms.token),
    resolved: median(ms.resolved),
    read: median(ms.read),
  };
  console.log(`dashboard GET /api/version, median of ${calls} each (ms):`);
  console.log(`  RAY_AUTH_MODE=disabled head, no token       ${m.plain.toFixed(3)}`);
  console.log(
    `  token head, Bearer token                    ${m.token.toFixed(3)}  (+${(m.token - m.plain).toFixed(3)})`,
  );
  console.log(
    `  token head, token file read, then the call  ${m.resolved.toFixed(3)}  (+${(m.resolved - m.plain).toFixed(3)})`,
  );
  console.log(`  token file read alone (readAuthToken)       ${m.read.toFixed(3)}`);
} finally {
  for (const p of procs) if (p.pid) signalProcessGroup(p.pid, 'SIGTERM');
  await sleep(4000);
  for (const p of procs) if (p.pid) signalProcessGroup(p.pid, 'SIGKILL');
  await rm(root, { recursive: true, force: true });
}
