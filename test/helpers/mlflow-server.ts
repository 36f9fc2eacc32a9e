import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../src/backends/local/ports.js';
import { loadConfig } from '../../src/config/config.js';

/**
 * A real `mlflow server` from the venv (PyPI mlflow, pinned in requirements-test.txt): SQLite backend
 * store and a local artifact root served through its artifact proxy, on a free loopback port.
 * Its background job runner is off (it starts a dozen huey processes this test never needs).
 * Runs in its own process group, stopped as a whole.
 */
export async function startMlflowServer(): Promise<{ uri: string; dir: string; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mlflow-'));
  const [port] = (await freePorts(1)) as [number];
  const mlflow = join(loadConfig().RAGEN_VENV, 'bin', 'mlflow');
  const child: ChildProcess = spawn(
    mlflow,
    [
      'server',
      '--backend-store-uri',
      `sqlite:///${dir}/mlflow.db`,
      '--artifacts-destination',
      join(dir, 'artifacts'),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--workers',
      '1',
    ],
    {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, MLFLOW_SERVER_ENABLE_JOB_EXECUTION: 'false' },
    },
  );
  let log = '';
  child.stderr?.on('data', (d: Buffer) => {
    log = (log + d.toString()).slice(-4000);
  });
  const uri = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || !child.pid) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-child.pid, 'SIGTERM');
    const timer = setTimeout(() => child.pid && process.kill(-child.pid, 'SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 240_000; // a cold start on a busy 2-core machine took 50 s
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mlflow server exited ${child.exitCode}: ${log}`);
    const ok = await fetch(`${uri}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { uri, dir, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`mlflow server did not answer on ${uri}: ${log}`);
    }
    await sleep(250);
  }
}
