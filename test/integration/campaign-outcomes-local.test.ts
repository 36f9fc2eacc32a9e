/**
 * Campaign outcomes on the real stack (dev server, worker process, real Ray, the real payload): a
 * bad override ends the campaign on its first cluster, and the trainer's own early stop ends it
 * `earlyStopped` without another attempt. Numbers for the report are printed, not asserted.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { CampaignResult } from '../../src/domain/campaign/campaign.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { FaultHarness } from '../helpers/fault-harness.js';
import { rayProcesses } from '../helpers/processes.js';

let h: FaultHarness;
before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the suite');
  h = await FaultHarness.start();
});
after(async () => {
  await h?.close();
});

async function outcomeOf(handle: WorkflowHandle): Promise<{ result?: CampaignResult; error?: unknown }> {
  try {
    return { result: (await handle.result()) as CampaignResult };
  } catch (error) {
    const details =
      error instanceof WorkflowFailedError
        ? (error.cause as { details?: unknown[] } | undefined)?.details?.[0]
        : undefined;
    return { result: details as CampaignResult | undefined, error };
  }
}

/** Clusters a campaign created: the submits its attempts' manifests record. */
async function clustersCreated(result: CampaignResult | undefined): Promise<number> {
  let clusters = 0;
  for (const a of result?.attempts ?? [])
    clusters += ManifestSchema.parse(JSON.parse(await readFile(a.manifestPath, 'utf8'))).cluster.submits;
  return clusters;
}

describe('campaign outcomes (real dev server, worker process, real Ray, real payload)', () => {
  it('a bad override (the payload exits 2) ends the campaign at once, on one cluster', async () => {
    const id = `bad-override-${process.pid}`;
    const started = Date.now();
    const handle = await h.startCampaign(id, h.spec(8, { 'algorithm.lrr': 0.1 }));
    const { result, error } = await outcomeOf(handle);
    assert.ok(error instanceof WorkflowFailedError, String(error));
    assert.equal((error.cause as { type?: string }).type, ErrorTypes.TrainingConfigInvalid);
    assert.equal(result?.attempts.length, 1);
    assert.match(result?.reason ?? '', /unknown override key 'algorithm\.lrr'/);
    const clusters = await clustersCreated(result);
    assert.equal(clusters, 1);
    console.log(
      `[issue 13 numbers] clusters created for a bad override: ${clusters}; campaign wall time ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
  });

  it("the trainer's early stop (exit 0, early_stopped/*) ends the campaign earlyStopped, not retried", async () => {
    const id = `early-stop-${process.pid}`;
    const spec = h.spec(8, {
      'early_stop.min_val_success': 1.01,
      'early_stop.patience': 2,
    });
    spec.trainer.testFreq = 1;
    const { result, error } = await outcomeOf(await h.startCampaign(id, spec));
    assert.equal(error, undefined, String(error));
    assert.equal(result?.outcome, 'earlyStopped');
    assert.equal(result?.attempts.length, 1);
    assert.match(result?.reason ?? '', /early stop at step 2: low_validation_success/);
    const manifest = ManifestSchema.parse(
      JSON.parse(await readFile(result?.attempts[0]?.manifestPath ?? '', 'utf8')),
    );
    assert.equal(manifest.outcome, 'earlyStopped');
    assert.deepEqual(manifest.training.earlyStopped, { step: 2, reasons: ['low_validation_success'] });
    assert.equal(manifest.validation.outcome, 'skipped');
    assert.deepEqual(await rayProcesses(), [], 'no Ray process is left');
  });
});
