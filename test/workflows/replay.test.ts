import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { Worker } from '@temporalio/worker';
import { corpusEntries, historiesOf, historiesRoot } from '../helpers/history-corpus.js';
import { workflowBundle } from '../helpers/temporal.js';

// Every file of every release folder, so a history recorded later (npm run record-histories) is
// replayed without editing this test. A file's name is the workflow id it was recorded under.
const { releases, strays } = corpusEntries();

describe('determinism: every recorded history of every release replays with the current workflow code', () => {
  it('has release folders, each with histories (an empty one would pass while guarding nothing)', () => {
    assert.ok(releases.length > 0, `no release folder in ${historiesRoot}: run npm run record-histories`);
    for (const release of releases)
      assert.ok(historiesOf(release).length > 0, `${release}/ holds no history`);
  });

  it('keeps every history in the folder of the release that recorded it (nothing loose)', () => {
    assert.deepEqual(strays, [], 'move each into <x.y.z>/, the release whose code recorded it');
  });

  for (const release of releases) {
    for (const h of historiesOf(release)) {
      it(`${release}/${h.file}`, async () => {
        const json: unknown = JSON.parse(readFileSync(h.path, 'utf8'));
        // Throws DeterminismViolationError when the code no longer produces the recorded commands.
        await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, json, h.workflowId);
      });
    }
  }
});
