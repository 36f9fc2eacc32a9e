import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createArchive } from '../../src/activities/archive/archive.js';
import { hashCheckpoint } from '../../src/activities/checkpoints/checkpoints.js';
import type { ManifestDraft } from '../../src/domain/run/manifest.js';
import { inActivityContext } from '../helpers/activity-context.js';
import { succeededDraft, testSpec } from '../helpers/specs.js';

async function draftWithCheckpoints(root: string, steps: number[], tracker: number): Promise<ManifestDraft> {
  const checkpointDir = join(root, 'ckpt');
  for (const step of steps) {
    await mkdir(join(checkpointDir, `global_step_${step}`, 'actor'), { recursive: true });
    await writeFile(
      join(checkpointDir, `global_step_${step}`, 'actor', 'model_world_size_2_rank_0.npz'),
      `weights ${step}`,
    );
  }
  await writeFile(join(checkpointDir, 'latest_checkpointed_iteration.txt'), String(tracker));
  return succeededDraft(testSpec({}, root), checkpointDir, tracker);
}

describe('archive', () => {
  it('records the checkpoints it is given (the ledger hashes) and writes the manifest once', async () => {
    const root = await mkdtemp(join(tmpdir(), 'archive-'));
    const draft = await draftWithCheckpoints(root, [10, 20, 30], 20);
    // What hashCheckpoints hands over: the complete ones only (global_step_30 is past the tracker).
    const checkpoints = [
      await hashCheckpoint(draft.checkpointDir, 10),
      await hashCheckpoint(draft.checkpointDir, 20),
    ];
    const { run: archive } = inActivityContext(createArchive());
    const first = await archive({ draft, archiveDir: join(root, 'archive'), checkpoints });
    assert.equal(first.checkpoints, 2);
    const manifest = JSON.parse(await readFile(first.manifestPath, 'utf8'));
    assert.deepEqual(
      manifest.checkpoints.map((c: { step: number }) => c.step),
      [10, 20],
    );
    assert.match(manifest.checkpoints[0].files[0].sha256, /^[0-9a-f]{64}$/);
    const again = await archive({ draft, archiveDir: join(root, 'archive'), checkpoints });
    assert.equal(again.sha256, first.sha256, 'a retry with the same content succeeds');
  });

  it('never overwrites a different existing manifest', async () => {
    const root = await mkdtemp(join(tmpdir(), 'archive-'));
    const draft = await draftWithCheckpoints(root, [10], 10);
    const { run: archive } = inActivityContext(createArchive());
    const first = await archive({ draft, archiveDir: join(root, 'archive'), checkpoints: [] });
    const before = await readFile(first.manifestPath, 'utf8');
    await assert.rejects(
      archive({ draft: { ...draft, outcome: 'failed' }, archiveDir: join(root, 'archive'), checkpoints: [] }),
      /already exists/,
    );
    assert.equal(await readFile(first.manifestPath, 'utf8'), before);
  });
});
