import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { loadConfig } from '../../src/config/config.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { LocalBackend } from '../../src/backends/local/local-backend.js';
import { NodeLedgerFile } from '../../src/backends/local/node-ledger-file.js';
import { localBackendConfig } from '../../src/backends/registry.js';
import { liveSuspects } from '../../src/domain/node-health/node-ledger.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { rayProcesses } from '../helpers/processes.js';
import { slowLinkStandin } from '../helpers/slow-link-standin.js';
import { testInput, validSpecYaml } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

const run = promisify(execFile);

let env: TestWorkflowEnvironment;
let storage: string;
const runRoot = `/tmp/ro-bn-${process.pid}`;

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  env = await devServerEnv();
  storage = await mkdtemp(join(tmpdir(), 'ragen-bn-'));
});
after(async () => {
  await env?.teardown();
  if (!process.env['KEEP_RUN_ROOT']) await rm(runRoot, { recursive: true, force: true });
});

describe('a slow node is named, recorded and avoided (local backend, stand-in slow link)', () => {
  it('names local-slot-1 in the all-reduce check, resubmits a cluster without it, trains, and `nodes` lists and clears it', async () => {
    // Stand-in for a degraded NIC: the probe's fetches on slot 1 take 0.3 s longer. Three workers:
    // with two, a slow link cannot be pinned on either end.
    const config = { ...loadConfig(), RAGEN_RUN_ROOT: runRoot, RAGEN_POLL_INTERVAL_MS: 1000 };
    const deps = activityDeps(config, env.client);
    deps.backends.local = new LocalBackend({
      ...localBackendConfig(config),
      workerEnv: slowLinkStandin([1]),
    });
    const yaml = validSpecYaml(storage)
      .replace('replicas: 2', 'replicas: 3')
      .replace('nnodes: 2', 'nnodes: 3')
      .replace('joinSeconds: 60', 'joinSeconds: 180');
    const spec = parseExperimentSpec(yaml);
    const taskQueue = uniqueId('bn');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: createActivities(deps),
    });
    const result = await worker.runUntil(
      env.client.workflow.execute<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('bn-wf'),
        args: [testInput(spec)],
      }),
    );
    const errors = result.stages.filter((s) => s.error).map((s) => `${s.stage}#${s.attempt}: ${s.error}`);
    assert.equal(result.outcome, 'succeeded', errors.join('\n'));
    // The first cluster's check named slot 1 (and only it); the second cluster passed.
    const joinFailures = result.stages.filter((s) => s.stage === 'join' && s.error);
    assert.ok(joinFailures.length >= 1, errors.join('\n'));
    assert.match(joinFailures[0]!.error!, /slow node\(s\): node local-slot-1 \(/);
    assert.match(
      joinFailures[0]!.error!,
      /local-slot-1 recorded as link suspects in .*node-suspects\.json until /,
    );
    assert.doesNotMatch(joinFailures[0]!.error!, /node local-slot-[02] \(/);
    const ledger = liveSuspects(await new NodeLedgerFile(runRoot).read(), new Date());
    assert.deepEqual(
      ledger.map((s) => s.node),
      ['local-slot-1'],
    );
    const manifest = ManifestSchema.parse(
      JSON.parse(await readFile(result.archive.manifestPath ?? '', 'utf8')),
    );
    const links = (manifest.preflight.allReduce as { links?: { nodes: { node_name: string }[] } }).links;
    assert.deepEqual(links?.nodes.map((n) => n.node_name).sort(), [
      'local-slot-0',
      'local-slot-2',
      'local-slot-3',
    ]);
    assert.equal(result.training.finalStep, 20);
    assert.deepEqual(await rayProcesses(), [], 'teardown left Ray processes');

    const cli = (...args: string[]) =>
      run('npx', ['tsx', 'src/cli/main.ts', 'nodes', ...args], {
        env: { ...process.env, RAGEN_RUN_ROOT: runRoot },
      });
    const listed = await cli();
    assert.match(
      listed.stdout,
      /^local-slot-1 +\S+ +1 +best link [\d.]+ GB\/s, the median node's [\d.]+ GB\/s/m,
    );
    const cleared = await cli('clear', 'local-slot-1');
    assert.match(cleared.stdout, /cleared from .*node-suspects\.json: local-slot-1/);
    assert.match((await cli()).stdout, /no link suspects/);
  });
});
