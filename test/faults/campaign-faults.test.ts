/**
 * Fault injection on the real stack: Temporal dev server (database file), the worker as its own
 * process, real Ray (local backend), the real payload. Every scenario ends with: no Ray process
 * left, every checkpoint completed before the fault still there with the same hash, the right final
 * step, the right outcome in the campaign manifest. Numbers for the report are printed, not asserted.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { hashCheckpoint } from '../../src/activities/checkpoints.js';
import { CampaignManifestSchema, type CampaignManifest, type CampaignResult } from '../../src/spec/campaign.js';
import { ErrorTypes } from '../../src/spec/error-types.js';
import type { ExperimentSpec } from '../../src/spec/experiment.js';
import { ManifestSchema } from '../../src/spec/manifest.js';
import { FaultHarness, completedCheckpointHashes } from '../helpers/fault-harness.js';
import { rayProcesses } from '../helpers/processes.js';

let h: FaultHarness;
const suiteStarted = Date.now();
const numbers: string[] = [];
const note = (line: string) => {
  numbers.push(line);
  console.log(`[fault numbers] ${line}`);
};

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the suite');
  h = await FaultHarness.start();
});
after(async () => {
  await h?.close();
  note(`suite wall time ${((Date.now() - suiteStarted) / 1000).toFixed(1)} s`);
  console.log(`[fault numbers] summary:\n  ${numbers.join('\n  ')}`);
});

async function outcomeOf(handle: WorkflowHandle): Promise<{ result?: CampaignResult; error?: unknown }> {
  try {
    return { result: (await handle.result()) as CampaignResult };
  } catch (error) {
    const details = error instanceof WorkflowFailedError ? (error.cause as { details?: unknown[] } | undefined)?.details?.[0] : undefined;
    return { result: details as CampaignResult | undefined, error };
  }
}

/** The checks every scenario ends with. */
async function assertEnd(spec: ExperimentSpec, id: string, expected: { outcome: CampaignManifest['outcome']; finalStep?: number; before: Map<number, string> }): Promise<CampaignManifest> {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
  assert.deepEqual(await h.clustersOf(`${id}-a1`), [], 'no cluster state is left');
  const dir = h.checkpointDir(spec, id);
  for (const [step, sha] of expected.before) {
    assert.equal((await hashCheckpoint(dir, step)).sha256, sha, `checkpoint ${step}, complete before the fault, is unchanged`);
  }
  const manifest = CampaignManifestSchema.parse(JSON.parse(await readFile(join(spec.storage.archiveDir, spec.name, id, 'campaign.json'), 'utf8')));
  assert.equal(manifest.outcome, expected.outcome, manifest.reason);
  if (expected.finalStep !== undefined) assert.equal(manifest.attempts.at(-1)?.finalStep, expected.finalStep);
  for (const a of manifest.attempts) {
    const attemptManifest = ManifestSchema.parse(JSON.parse(await readFile(a.manifestPath, 'utf8')));
    assert.equal(attemptManifest.resumedFrom, a.startedFrom, 'each attempt manifest records where it started');
    assert.ok(a.manifestSha256, 'the campaign manifest links the attempt manifest by hash');
  }
  for (const [step, sha] of expected.before) assert.equal(manifest.checkpoints.find((c) => c.step === step)?.sha256, sha, `ledger hash of ${step}`);
  return manifest;
}

describe('campaign fault injection (real dev server, worker process, real Ray, real payload)', () => {
  it('5: the trainer exits non-zero; the next attempt resumes from the latest checkpoint', async () => {
    const id = `fault5-${process.pid}`;
    // Checkpoints at 2 and 4; the payload's test-only hook exits 1 once, after step 5.
    const spec = h.spec(8, { 'fault.exit_after_step': 5 });
    const handle = await h.startCampaign(id, spec);
    const { result, error } = await outcomeOf(handle);
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'succeeded');
    const [a1, a2] = result?.attempts ?? [];
    assert.equal(a1?.ended.type, ErrorTypes.TrainingFailed);
    assert.match(a1?.ended.message ?? '', /fault injection/);
    assert.equal(a2?.startedFrom, `${h.checkpointDir(spec, id)}/global_step_4`);
    assert.equal(a2?.previousEnded?.type, ErrorTypes.TrainingFailed);
    // What attempt 1 archived right after the fault is what the campaign still has.
    const first = ManifestSchema.parse(JSON.parse(await readFile(a1?.manifestPath ?? '', 'utf8')));
    const before = new Map(first.checkpoints.map((c) => [c.step, c.sha256]));
    assert.deepEqual([...before.keys()], [2, 4]);
    await assertEnd(spec, id, { outcome: 'succeeded', finalStep: 8, before });
    note(`5 non-zero exit: steps lost ${5 - (a2?.startedFromStep ?? 0)} (save_freq ${spec.trainer.saveFreq}); attempts ${result?.attempts.length}; history events per run ${JSON.stringify(result?.historyEventsPerRun)}`);
  });

  it('2: a Ray worker node is killed during training; the cluster is torn down and the next attempt resumes', async () => {
    const id = `fault2-${process.pid}`;
    const spec = h.spec(40);
    const handle = await h.startCampaign(id, spec);
    const at = await h.waitForProgress(handle, (p) => p.lastCheckpointStep >= 4, 'checkpoint 4');
    const [cluster] = await h.clustersOf(`${id}-a1`);
    assert.ok(cluster?.workerPids[0], 'the attempt has a local cluster with worker nodes');
    const before = await completedCheckpointHashes(h.checkpointDir(spec, id));
    const killedAt = Date.now();
    process.kill(-cluster.workerPids[0], 'SIGKILL'); // the node's whole process group: raylet and its workers
    const { result, error } = await outcomeOf(handle);
    assert.equal(error, undefined, String(error));
    const [a1, a2] = result?.attempts ?? [];
    assert.ok([ErrorTypes.ClusterLost, ErrorTypes.TrainingFailed, ErrorTypes.NoProgress].includes(a1?.ended.type as never), `attempt 1 ended with ${a1?.ended.type}`);
    assert.ok((a2?.startedFromStep ?? 0) >= Math.max(...before.keys()), 'resumed from the latest checkpoint');
    const trainEnd = a1?.stages?.find((s) => s.stage === 'train')?.endedAt;
    await assertEnd(spec, id, { outcome: 'succeeded', finalStep: 40, before });
    note(`2 worker node killed at step ~${at.step}: detected after ${trainEnd ? ((Date.parse(trainEnd) - killedAt) / 1000).toFixed(1) : '?'} s as ${a1?.ended.type}; resumed from step ${a2?.startedFromStep}`);
  });
});

