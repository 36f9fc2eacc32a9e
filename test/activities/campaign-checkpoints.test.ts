import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createArchiveCampaign } from '../../src/activities/campaign/campaign-archive.js';
import { createLatestCompleteCheckpoint } from '../../src/activities/campaign/campaign-checkpoints.js';
import { CampaignManifestSchema } from '../../src/domain/campaign/campaign.js';
import { inActivityContext } from '../helpers/activity-context.js';

async function save(dir: string, step: number, content = `weights ${step}`) {
  await mkdir(join(dir, `global_step_${step}`, 'actor'), { recursive: true });
  await writeFile(join(dir, `global_step_${step}`, 'actor', 'model.npz'), content);
}

describe('latestCompleteCheckpoint (real files)', () => {
  it('takes the tracker as the upper bound, records hashes once, and skips a checkpoint whose files changed', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ledger-'));
    const dir = join(root, 'ckpt');
    const ledgerPath = join(root, 'archive', 'checkpoints.json');
    // In an activity context: it heartbeats once per hashed file.
    const { run: find, heartbeats } = inActivityContext(createLatestCompleteCheckpoint());
    assert.equal(
      (await find({ checkpointDir: dir, ledgerPath, now: 't0' })).latest,
      undefined,
      'nothing yet',
    );

    await save(dir, 10);
    await save(dir, 20);
    await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), '20\n');
    await save(dir, 30); // a folder the tracker does not name yet: not complete
    const first = await find({ checkpointDir: dir, ledgerPath, now: 't1' });
    assert.equal(first.latest?.step, 20);
    assert.deepEqual(
      first.checkpoints.map((c) => c.step),
      [10, 20],
    );
    assert.deepEqual(
      heartbeats.map((h) => (h as { step: number }).step),
      [10, 20],
      'new checkpoints are hashed once, one heartbeat per file',
    );

    await writeFile(join(dir, 'global_step_20', 'actor', 'model.npz'), 'overwritten by someone');
    const second = await find({ checkpointDir: dir, ledgerPath, now: 't2' });
    assert.equal(second.latest?.step, 10, 'a changed checkpoint is never resumed from');
    assert.match(second.untrusted[0]?.reason ?? '', /files of .*global_step_20 changed since t1/);
    const ledger = JSON.parse(await readFile(ledgerPath, 'utf8')) as {
      checkpoints: { step: number; sha256: string; firstSeenAt: string }[];
    };
    assert.equal(
      ledger.checkpoints.find((c) => c.step === 20)?.firstSeenAt,
      't1',
      'the ledger keeps the first hash',
    );

    await rm(join(dir, 'global_step_10'), { recursive: true });
    const third = await find({ checkpointDir: dir, ledgerPath, now: 't3' });
    assert.equal(third.latest, undefined);
    assert.deepEqual(
      third.untrusted.map((u) => u.step),
      [10, 20],
    );
    await rm(root, { recursive: true, force: true });
  });

  it('writes the campaign manifest once, linking each attempt manifest by hash, and never overwrites it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'campaign-manifest-'));
    const attemptManifest = join(root, 'a1', 'manifest.json');
    await mkdir(join(root, 'a1'), { recursive: true });
    await writeFile(attemptManifest, '{"attempt":1}\n');
    const archive = createArchiveCampaign();
    const attempt = {
      attempt: 1,
      workflowId: 'c-a1',
      startedFromStep: 0,
      totalTrainingSteps: 20,
      outcome: 'succeeded' as const,
      ended: { type: 'succeeded', message: 'step 20' },
      finalStep: 20,
      checkpointStepAfter: 20,
      manifestPath: attemptManifest,
      gpuSeconds: 4,
      startedAt: 't0',
      endedAt: 't1',
    };
    const draft = {
      campaign: 'c',
      experiment: 'x',
      temporal: { workflowId: 'c', runId: 'r', namespace: 'default', taskQueue: 'q' },
      budgets: { maxAttempts: 3, maxAttemptsWithoutNewCheckpoint: 2, historyEventsBeforeContinueAsNew: 2000 },
      provenance: {
        repoCommit: '0'.repeat(40),
        repoDirty: false,
        repoSource: 'spec' as const,
        submodules: {},
        modelRevision: 'm',
        orchestratorVersion: '0',
      },
      checkpointDir: join(root, 'ckpt'),
      totalTrainingSteps: 20,
      outcome: 'succeeded' as const,
      attempts: [attempt],
      gpuSeconds: 4,
      continuedAsNew: 0,
      writtenAt: 't2',
      ledgerPath: join(root, 'none.json'),
    };
    const written = await archive({ draft, archiveDir: root, untrusted: [] });
    const manifest = CampaignManifestSchema.parse(JSON.parse(await readFile(written.manifestPath, 'utf8')));
    assert.match(manifest.attempts[0]?.manifestSha256 ?? '', /^[0-9a-f]{64}$/);
    assert.deepEqual(
      await archive({ draft, archiveDir: root, untrusted: [] }),
      written,
      'a retry with the same content succeeds',
    );
    await assert.rejects(
      archive({ draft: { ...draft, outcome: 'failed' }, archiveDir: root, untrusted: [] }),
      /different campaign manifest already exists/,
    );
    await rm(root, { recursive: true, force: true });
  });
});
