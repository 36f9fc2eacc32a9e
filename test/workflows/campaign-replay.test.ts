import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../helpers/temporal.js';

describe('campaign determinism', () => {
  it('replays a recorded campaign history (a failed attempt, then a resumed one) with the current code', async () => {
    const json: unknown = JSON.parse(
      await readFile(new URL('./histories/campaign-resumed.json', import.meta.url), 'utf8'),
    );
    await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, json, 'recorded-campaign');
  });
});
