import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Worker } from '@temporalio/worker';
import { historiesDir } from '../helpers/history-recorder.js';
import { workflowBundle } from '../helpers/temporal.js';

// Every file in the folder, so a history recorded later (npm run record-histories) is replayed
// without editing this test. A file's name is the workflow id it was recorded under (URI-encoded).
const dir = fileURLToPath(historiesDir);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('determinism: every recorded history replays with the current workflow code', () => {
  it('has histories to replay (an empty folder would make this file pass while guarding nothing)', () => {
    assert.ok(files.length > 0, `no histories in ${dir}: run npm run record-histories`);
  });

  for (const file of files) {
    it(file, async () => {
      const json: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      // Throws DeterminismViolationError when the code no longer produces the recorded commands.
      await Worker.runReplayHistory(
        { workflowBundle: await workflowBundle() },
        json,
        decodeURIComponent(file.replace(/\.json$/, '')),
      );
    });
  }
});
