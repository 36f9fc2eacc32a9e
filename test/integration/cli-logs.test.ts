import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { printTrainingLogs } from '../../src/cli/logs.js';
import { runArchiveDir, trainLogPath } from '../../src/domain/spec/paths.js';
import { testInput, testSpec } from '../helpers/specs.js';
import { devServerEnv, uniqueId } from '../helpers/temporal.js';

let env: TestWorkflowEnvironment;
before(async () => {
  env = await devServerEnv();
});
after(async () => {
  await env?.teardown();
});

describe('logs <workflow id> on the real dev server', () => {
  it("prints an experiment's log copy, and with -f what is added until the workflow closes", async () => {
    const spec = testSpec({}, await mkdtemp(join(tmpdir(), 'cli-logs-')));
    const workflowId = uniqueId('logs');
    // No worker polls this queue: the workflow stays running, its input is in its first event.
    const handle = await env.client.workflow.start('experiment', {
      taskQueue: uniqueId('unserved'),
      workflowId,
      args: [testInput(spec)],
    });
    const runDir = runArchiveDir(spec.storage, spec.name, workflowId);
    await mkdir(runDir, { recursive: true });
    const copy = trainLogPath(runDir, 'x-h-a0');
    await writeFile(copy, 'step:1 - r:1\n');
    const once: string[] = [];
    const write = (out: string[]) => async (b: string | Buffer) => void out.push(b.toString());
    await printTrainingLogs(env.client, 'default', workflowId, false, write(once));
    assert.equal(once.join(''), '== cluster x-h-a0 ==\nstep:1 - r:1\n');

    const followed: string[] = [];
    const following = printTrainingLogs(env.client, 'default', workflowId, true, write(followed), 100);
    await sleep(300);
    await appendFile(copy, 'step:2 - r:2\n');
    await sleep(300);
    await appendFile(copy, 'step:3 - r:3\n'); // written as the workflow closes: still printed
    await handle.terminate('test done');
    await following;
    assert.equal(followed.join(''), '== cluster x-h-a0 ==\nstep:1 - r:1\nstep:2 - r:2\nstep:3 - r:3\n');
  });
});
