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
  /** The operator's process (CPU time and memory from /proc; a bench reads them). */
  pid: number;
  /** Its controller-runtime metrics (rest_client_requests_total: its Kubernetes API requests). */
  metricsUrl: string;
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
  options: { hostsFile?: string } = {},
): Promise<RunningOperator> {
  const [metrics, health] = (await freePorts(2)) as [number, number];
  const log = await open(logPath, 'a');
  const args = [
    '--enable-leader-election=false',
    `--metrics-addr=127.0.0.1:${metrics}`,
    `--health-probe-bind-address=127.0.0.1:${health}`,
    '--log-stdout-encoder=console',
  ];
  // hostsFile: the operator sees it as its /etc/hosts (a private mount namespace; unshare and sh
  // exec, so the child is the operator itself). In a cluster the operator resolves a head
  // Service's DNS name (a RayJob's HTTPMode submit) through cluster DNS; here the stand-in kubelet
  // writes the Services' names into that file.
  const [command, commandArgs] = options.hostsFile
    ? [
        'unshare',
        [
          '--mount',
          '--propagation',
          'private',
          '--',
          'sh',
          '-c',
          'mount --bind "$0" /etc/hosts && exec "$@"',
          options.hostsFile,
          bin,
          ...args,
        ],
      ]
    : [bin, args];
  const child: ChildProcess = spawn(command, commandArgs, {
    env: {
      KUBECONFIG: kubeconfig,
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: process.env['HOME'] ?? '/root',
      // The operator's periodic reconcile (default 300 s) is when it creates a resumed cluster's
      // Pods; 10 s keeps the suspension test short without changing what the operator does.
      RAYCLUSTER_DEFAULT_REQUEUE_SECONDS_ENV: '10',
    },
    stdio: ['ignore', log.fd, log.fd],
  });
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
    if (ready)
      return { logPath, pid: child.pid ?? 0, metricsUrl: `http://127.0.0.1:${metrics}/metrics`, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`kuberay-operator not ready within ${timeoutMs / 1000} s; see ${logPath}`);
    }
    await sleep(250);
  }
}
