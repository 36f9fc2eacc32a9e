import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { startOrExplain } from '../../src/cli/start-failures.js';
import { loadConfig } from '../../src/config/config.js';
import { UserError } from '../../src/config/user-errors.js';
import { searchAttributeDefinitions } from '../../src/workflows/search-attributes.js';
import { cli } from '../helpers/cli-process.js';
import { validSpecYaml } from '../helpers/specs.js';
import { uniqueId } from '../helpers/temporal.js';

/**
 * What a new user meets on their own server: a real dev server started WITHOUT the project's search
 * attributes, a namespace that does not exist, an id already running. No worker: each start is
 * refused (or stays queued) before any workflow code runs.
 */
describe('start failures against a real dev server (no project search attributes)', () => {
  let env: TestWorkflowEnvironment;
  let address: string;
  let specFile: string;

  before(async () => {
    env = await TestWorkflowEnvironment.createLocal({
      server: { executable: { type: 'existing-path', path: loadConfig().temporalBin } },
    });
    address = env.connection.options.address;
    const dir = await mkdtemp(join(tmpdir(), 'start-failures-'));
    specFile = join(dir, 'spec.yaml');
    await writeFile(specFile, validSpecYaml(dir));
  });
  after(async () => {
    await env?.teardown();
  });

  it('run: one line naming every missing search attribute and the command that registers them (exit 1)', async () => {
    const r = await cli(['run', specFile], { TEMPORAL_ADDRESS: address });
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    for (const { name, type } of searchAttributeDefinitions())
      assert.ok(lines[0]!.includes(`--name ${name} --type ${type}`), `${name} in ${lines[0]}`);
    assert.match(
      lines[0]!,
      /namespace 'default' at .* lacks the project's search attributes RagenName, RagenKind/,
    );
    assert.doesNotMatch(r.stderr, /Failed to start Workflow|\n\s+at /);
  });

  it('sweep and campaign: the same line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'start-failures-'));
    await writeFile(join(dir, 'base.yaml'), validSpecYaml(dir));
    const sweep = join(dir, 'sweep.yaml');
    await writeFile(
      sweep,
      'name: sa-sweep\nbase: base.yaml\nparameters:\n  grid:\n    trainer.seedTrain: [1, 2]\n',
    );
    const campaign = join(dir, 'campaign.yaml');
    // saveFreq 5 of 20: within the resume-loss bound, so no warning line before the error.
    await writeFile(
      campaign,
      `${validSpecYaml(dir).replace('  saveFreq: 10', '  saveFreq: 5')}campaign:\n  maxAttempts: 2\n`,
    );
    for (const args of [
      ['sweep', sweep],
      ['campaign', campaign],
    ]) {
      const r = await cli(args, { TEMPORAL_ADDRESS: address });
      assert.equal(r.code, 1, `${args[0]}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(
        r.stderr,
        /lacks the project's search attributes .*temporal operator search-attribute create/,
      );
    }
  });

  it('a namespace that does not exist: one line naming it and how to create it (exit 1)', async () => {
    const r = await cli(['run', specFile], { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: 'no-such-ns' });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /namespace 'no-such-ns' does not exist at .*temporal operator namespace create --namespace no-such-ns/,
    );
  });

  it('an id already running: one line naming the id', async () => {
    const workflowId = uniqueId('already-running');
    const start = () =>
      env.client.workflow.start('experiment', { taskQueue: uniqueId('nobody-polls'), workflowId, args: [] });
    const ctx = { address, namespace: 'default' };
    await startOrExplain(env.client, ctx, start);
    const err = await startOrExplain(env.client, ctx, start).catch((e: unknown) => e);
    assert.ok(err instanceof UserError, String(err));
    assert.match(err.message, new RegExp(`'${workflowId}' is already running in namespace 'default'`));
    await env.client.workflow.getHandle(workflowId).terminate('test done');
  });
});
