import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { stopCluster } from '../../src/backends/local/launcher.js';
import type { BackendLogger } from '../../src/backends/logger.js';
import { CLUSTER_ENV_MARKER } from '../../src/backends/local/processes.js';

describe('local teardown escalation', () => {
  it('logs the SIGKILL it sends to a process that outlives SIGTERM', async () => {
    const name = `escalation-${process.pid}`;
    // A stand-in for a stuck Ray process: carries the cluster marker and ignores SIGTERM.
    const stuck = spawn('sh', ['-c', "trap '' TERM; echo ready; while :; do sleep 0.1; done"], {
      env: { ...process.env, [CLUSTER_ENV_MARKER]: name },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const ended = new Promise((r) => stuck.once('exit', (_code, signal) => r(signal)));
    await new Promise((r) => stuck.stdout.once('data', r));
    const lines: { message: string; fields?: Record<string, unknown> }[] = [];
    const logger: BackendLogger = {
      info: (message, fields) => lines.push({ message, fields }),
      warn: (message, fields) => lines.push({ message, fields }),
    };
    const left = await stopCluster({ name, nodes: [] }, 500, logger);
    assert.deepEqual(left, []);
    assert.equal(await ended, 'SIGKILL');
    assert.equal(lines.length, 1);
    assert.match(lines[0]?.message ?? '', /outlived SIGTERM; sending SIGKILL/);
    assert.equal(lines[0]?.fields?.['cluster'], name);
    assert.ok((lines[0]?.fields?.['pids'] as number[]).length >= 1);
  });
});
