import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../helpers/temporal.js';

describe('determinism', () => {
  it('replays a recorded experiment history with the current workflow code', async () => {
    const json: unknown = JSON.parse(
      await readFile(new URL('./histories/experiment-succeeded.json', import.meta.url), 'utf8'),
    );
    // Throws DeterminismViolationError when the code no longer produces the recorded commands.
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, json, 'recorded-experiment');
  });

  it('replays a recorded sweep history with the current workflow code', async () => {
    const json: unknown = JSON.parse(
      await readFile(new URL('./histories/sweep-succeeded.json', import.meta.url), 'utf8'),
    );
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, json, 'recorded-sweep');
  });
});
