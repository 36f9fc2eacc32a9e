import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePorts } from '../../src/backends/local/ports.js';

/**
 * The real KubeRay operator (v1.5.0, built from its Go module by scripts/k8s/build.sh), run out of
 * cluster against the test kube-apiserver with the admin kubeconfig: leader election off, its
 * metrics and health endpoints on loopback ports of its own. It reconciles RayClusters into Pods
 * and a head Service and writes their status, exactly as in a cluster.
 */
export interface RunningOperator {
  logPath: string;
  stop(): Promise<void>;
}

export function operatorBinary(kuberayBin: string): string | undefined {
  const bin = join(kuberayBin, 'kuberay-operator');
  return existsSync(bin) ? bin : undefined;
}

export async function startKubeRayOperator(
  bin: string,
  kubeconfig: string,
  logPath: string,
  timeoutMs = 60_000,
): Promise<RunningOperator> {
  const [metrics, health] = (await freePorts(2)) as [number, number];
  const log = await open(logPath, 'a');
  const child: ChildProcess = spawn(
    bin,
    [
      '--enable-leader-election=false',
      `--metrics-addr=127.0.0.1:${metrics}`,
      `--health-probe-bind-address=127.0.0.1:${health}`,
      '--log-stdout-encoder=console',
    ],
    {
      env: {
        KUBECONFIG: kubeconfig,
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        HOME: process.env['HOME'] ?? '/root',
        // The operator's periodic reconcile (default 300 s) is when it creates a resumed cluster's
        // Pods; 10 s keeps the suspension test short without changing what the operator does.
        RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV: '10',
      },
      stdio: ['ignore', log.fd, log.fd],
    },
  );
  await log.close();
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `kuberay-operator exited with ${child.exitCode}; see ${logPath}\n${(await readFile(logPath, 'utf8')).slice(-3000)}`,
      );
    const ready = await fetch(`http://127.0.0.1:${health}/readyz`, {
      signal: AbortSignal.timeout(2000),
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { logPath, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`kuberay-operator not ready within ${timeoutMs / 1000} s; see ${logPath}`);
    }
    await sleep(250);
  }
}
