import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import puppeteer from 'puppeteer-core';
import { freePorts } from '../../src/backends/local/ports.js';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';
import { type ListFilters, listQuery } from '../../src/cli/list-query.js';
import { listWorkflows } from '../../src/cli/list.js';
import { collectUsage, usageQuery } from '../../src/cli/usage-sources.js';
import { experimentStart, sweepStart } from '../../src/cli/start-options.js';
import { stageQuery } from '../../src/workflows/experiment-definitions.js';
import { progressSignal } from '../../src/workflows/shared-definitions.js';
import { SearchAttributes as K } from '../../src/workflows/search-attributes.js';
import { fakeActivities, heartbeatUntilCancelled } from '../helpers/fake-activities.js';
import { testInput, testSpec } from '../helpers/specs.js';
import type { SweepSpec } from '../../src/domain/sweep/sweep.js';
import { seedSweep, sweepInput } from '../helpers/sweeps.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

const run = promisify(execFile);

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

const RUNNING = 'vis-running';

// Real dev server (UI on), stand-in activities: training of RUNNING never ends until cancelled.
describe('search attributes, summary, details, list and the Temporal UI (real dev server, stand-in activities)', () => {
  let env: TestWorkflowEnvironment;
  let worker: Worker;
  let running: Promise<void>;
  let uiPort: number;
  let address: string;
  const taskQueue = uniqueId('tq-vis');
  let live: WorkflowHandleWithFirstExecutionRunId;

  /** A sweep of stand-in children, started as the CLI starts one, to its end. */
  const runSweep = (sweep: SweepSpec, workflowId: string) =>
    env.client.workflow
      .start('sweep', { taskQueue, workflowId, args: [sweepInput(sweep)], ...sweepStart(sweep, workflowId) })
      .then((h) => h.result());
  /** The workflow ids a `list` filter finds, sorted. */
  const ids = async (f: ListFilters) =>
    (await listWorkflows(env.client, listQuery(f), 50)).map((r) => r.workflowId).sort();

  before(async () => {
    // A free TCP port for the UI (the dev server's gRPC port is picked by the SDK).
    [uiPort] = (await freePorts(1)) as [number];
    env = await devServerEnv({ uiPort });
    address = env.address;
    const total = testSpec().trainer.totalTrainingSteps;
    const { activities } = fakeActivities({
      train: async ({ spec }) =>
        spec.name === RUNNING
          ? heartbeatUntilCancelled()
          : { finalStep: total, lastCheckpointStep: total, lastMetrics: {}, entrypoint: [] },
    });
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities,
    });
    running = worker.run();
    const spec = testSpec({ name: RUNNING });
    live = await env.client.workflow.start('experiment', {
      taskQueue,
      workflowId: uniqueId('vis-exp'),
      args: [testInput(spec)],
      ...experimentStart(spec),
    });
    await eventually('the train stage', async () =>
      (await live.query(stageQuery)) === 'train' ? true : undefined,
    );
    await live.signal(progressSignal, { step: 12, lastCheckpointStep: 10 });
  });

  after(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  it('a running experiment: search attributes, summary and details, read by the client and the temporal CLI', async () => {
    const d = await eventually('checkpoint step 10 in visibility', async () => {
      const d = await live.describe();
      return d.typedSearchAttributes.get(K.checkpointStep) === 10 ? d : undefined;
    });
    const sa = d.typedSearchAttributes;
    assert.equal(sa.get(K.kind), 'experiment');
    assert.equal(sa.get(K.name), RUNNING);
    assert.equal(sa.get(K.backend), 'local');
    assert.equal(sa.get(K.stage), 'train');
    assert.equal(sa.get(K.outcome), undefined, 'no outcome while it runs');
    assert.equal(await d.staticSummary(), `${RUNNING}: experiment on local, 20 steps`);
    const meta = await live.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    assert.match(meta.currentDetails ?? '', /\*\*stage\*\* train/);
    assert.match(meta.currentDetails ?? '', /\*\*step\*\* 12 \/ 20 · \*\*last checkpoint\*\* 10/);
    assert.match(meta.currentDetails ?? '', new RegExp(`manifest\\*\\* /tmp/ragen-test/archive/${RUNNING}/`));

    const query = `RagenKind = 'experiment' AND RagenStage = 'train' AND RagenCheckpointStep = 10`;
    const listed = [];
    for await (const w of env.client.workflow.list({ query })) listed.push(w.workflowId);
    assert.deepEqual(listed, [live.workflowId]);
    const { stdout } = await run(loadConfig().temporalBin, [
      'workflow',
      'list',
      '--address',
      address,
      '--query',
      query,
      '--output',
      'json',
    ]);
    const rows = JSON.parse(stdout) as { execution: { workflowId: string } }[];
    assert.deepEqual(
      rows.map((r) => r.execution.workflowId),
      [live.workflowId],
    );
    const shown = await run(loadConfig().temporalBin, [
      'workflow',
      'describe',
      '--address',
      address,
      '--workflow-id',
      live.workflowId,
      '--output',
      'json',
    ]);
    assert.match(shown.stdout, /RagenCheckpointStep/);
    assert.match(shown.stdout, new RegExp(`${RUNNING}: experiment on local`));
  });

  it('the Temporal UI shows the summary, the details and the search attributes (headless Chromium)', async () => {
    const browser = await puppeteer.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox'],
    });
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1600, height: 1200 });
      const base = `http://127.0.0.1:${uiPort}/namespaces/default/workflows/${live.workflowId}/${live.firstExecutionRunId}`;
      await mkdir(`${REPO_ROOT}/test-output`, { recursive: true });
      // The workflow page, then its search-attributes tab and its metadata (summary and details) tab.
      const show = async (tab: string, expected: string[]) => {
        await page.goto(`${base}/${tab}`, { waitUntil: 'networkidle2', timeout: 30_000 });
        const body = await eventually(`${expected.join(', ')} on the ${tab} page`, async () => {
          // The UI renders markdown (the current details) in sandboxed iframes: read every frame.
          const texts = await Promise.all(
            page
              .frames()
              .map((f) => f.evaluate('document.body ? document.body.innerText : ""').catch(() => '')),
          );
          const text = texts.join('\n');
          return expected.every((e) => text.includes(e)) ? text : undefined;
        }).catch(async (err: Error) => {
          await page.screenshot({
            path: `${REPO_ROOT}/test-output/temporal-ui-${tab}-failed.png`,
            fullPage: true,
          });
          throw err;
        });
        await page.screenshot({ path: `${REPO_ROOT}/test-output/temporal-ui-${tab}.png`, fullPage: true });
        return body;
      };
      await show('history', [`${RUNNING}: experiment on local`]);
      await show('search-attributes', ['RagenStage', 'train', 'RagenCheckpointStep', 'RagenName', RUNNING]);
      await show('user-metadata', [`${RUNNING}: experiment on local`, 'last checkpoint']);
    } finally {
      await browser.close();
    }
  });

  it('list: filters built on visibility queries (kind, running, outcome, name, sweep)', async () => {
    const done = testSpec({ name: 'vis-done' });
    const finished = await env.client.workflow.start('experiment', {
      taskQueue,
      workflowId: uniqueId('vis-done'),
      args: [testInput(done)],
      ...experimentStart(done),
    });
    await finished.result();
    const sweepId = uniqueId('vis-sweep');
    await runSweep(seedSweep([1, 2], { concurrency: 2 }), sweepId);
    // Visibility is eventually consistent: on a loaded machine the running run's record can lag
    // behind the updates of the runs that just closed, so the filter is asked until it answers.
    const running = await eventually('the running experiment in the list', async () => {
      const found = await ids({ running: true, kind: 'experiment' });
      return found.length > 0 ? found : undefined;
    });
    assert.deepEqual(running, [live.workflowId]);
    const ok = await listWorkflows(
      env.client,
      listQuery({ running: false, outcome: 'succeeded', name: 'vis-*' }),
      50,
    );
    assert.deepEqual(
      ok.map((r) => [r.workflowId, r.stage, r.validationSuccess]),
      [[finished.workflowId, 'done', '0.75']],
    );
    assert.match(ok[0]?.gpuHours ?? '', /^\d/, 'GPU-hours of a finished run, from its RagenGpuSeconds');
    const children = await listWorkflows(env.client, listQuery({ running: false, sweep: sweepId }), 50);
    assert.equal(children.length, 3, 'the sweep and its two children');
    // The sweep's GPU-seconds are its children's, summed (each rounded to the millisecond).
    const gpuSeconds = async (id: string) =>
      (await env.client.workflow.getHandle(id).describe()).typedSearchAttributes.get(K.gpuSeconds) ?? NaN;
    const childSeconds = await Promise.all(
      children.filter((r) => r.kind === 'experiment').map((r) => gpuSeconds(r.workflowId)),
    );
    assert.ok(
      childSeconds.every((s) => s > 0),
      `each child's GPU-seconds: ${childSeconds.join(', ')}`,
    );
    assert.ok(Math.abs((await gpuSeconds(sweepId)) - (childSeconds[0]! + childSeconds[1]!)) < 0.01);
    assert.deepEqual(children.map((r) => r.kind).sort(), ['experiment', 'experiment', 'sweep']);
    const summaries = await Promise.all(
      children
        .filter((r) => r.kind === 'experiment')
        .map(async (r) =>
          env.client.workflow
            .getHandle(r.workflowId)
            .describe()
            .then((d) => d.staticSummary()),
        ),
    );
    assert.deepEqual(summaries.sort(), [
      'seed-sweep child 1/2: trainer.seedTrain=1',
      'seed-sweep child 2/2: trainer.seedTrain=2',
    ]);

    // The command itself, as a user runs it.
    const cli = await run('npx', ['tsx', 'src/cli/main.ts', 'list', '--sweep', sweepId, '--kind', 'sweep'], {
      cwd: REPO_ROOT,
      env: { ...process.env, TEMPORAL_ADDRESS: address },
    });
    const lines = cli.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /^WORKFLOW ID\s+KIND\s+NAME\s+STATUS\s+STAGE\s+OUTCOME\s+VAL SUCCESS/);
    assert.equal(lines.length, 2, cli.stdout);
    assert.match(
      lines[1] ?? '',
      new RegExp(`^${sweepId}\\s+sweep\\s+seed-sweep\\s+completed\\s+done\\s+succeeded\\s+0.75`),
    );

    await live.cancel();
    await assert.rejects(live.result());
    assert.deepEqual(await ids({ running: false, outcome: 'cancelled' }), [live.workflowId]);
  });

  it("owner and team: set at start, carried to a sweep's children, filtered by list --owner/--team", async () => {
    const ana = testSpec({ name: 'vis-owned', owner: 'ana', team: 'team-a' });
    const anaRun = await env.client.workflow.start('experiment', {
      taskQueue,
      workflowId: uniqueId('vis-owned'),
      args: [testInput(ana)],
      ...experimentStart(ana),
    });
    await anaRun.result();
    const sweepId = uniqueId('vis-owned-sweep');
    const base = seedSweep([3, 4], { concurrency: 2 });
    await runSweep({ ...base, base: { ...base.base, owner: 'bob', team: 'team-b' } }, sweepId);
    const bobs = await eventually('the sweep and its two children under owner bob', async () => {
      const found = await ids({ running: false, owner: 'bob' });
      return found.length === 3 ? found : undefined;
    });
    assert.ok(bobs.includes(sweepId) && bobs.every((id) => id.startsWith(sweepId)), bobs.join(', '));
    assert.deepEqual(
      await ids({ running: false, team: 'team-b', kind: 'experiment' }),
      bobs.filter((id) => id !== sweepId),
    );
    const child = bobs.find((id) => id !== sweepId)!;
    const attrs = (await env.client.workflow.getHandle(child).describe()).typedSearchAttributes;
    assert.deepEqual([attrs.get(K.owner), attrs.get(K.team)], ['bob', 'team-b']);

    // The command as a user runs it: only ana's run.
    const cli = await run('npx', ['tsx', 'src/cli/main.ts', 'list', '--owner', 'ana', '--team', 'team-a'], {
      cwd: REPO_ROOT,
      env: { ...process.env, TEMPORAL_ADDRESS: address },
    });
    const lines = cli.stdout.trim().split('\n');
    assert.equal(lines.length, 2, cli.stdout);
    assert.match(lines[1] ?? '', new RegExp(`^${anaRun.workflowId}\\s+experiment\\s+vis-owned\\s`));
  });
  it('usage: the visibility query (experiments, window, team) on the server; a running run to now, closed ones without manifests from RagenGpuSeconds', async () => {
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const now = new Date().toISOString();
    // team-b: the owner test's sweep children (the stand-in archive writes no manifest).
    const teamB = await collectUsage(env.client, usageQuery({ team: 'team-b' }, since, now), now);
    assert.deepEqual(teamB.leftOut, []);
    assert.equal(teamB.runs.length, 2, 'the two children, not the sweep');
    const gpuSeconds = await Promise.all(
      teamB.runs.map(
        async (r) =>
          (await env.client.workflow.getHandle(r.workflowId).describe()).typedSearchAttributes.get(
            K.gpuSeconds,
          ) ?? NaN,
      ),
    );
    assert.equal(
      teamB.runs.reduce((s, r) => s + r.allocatedMs, 0),
      gpuSeconds.reduce((s, g) => s + Math.round(g * 1000), 0),
    );
    // A running experiment of its own team (the file's first one was cancelled by the list test).
    const spec = testSpec({ name: RUNNING, owner: 'cy', team: 'team-u' });
    const running = await env.client.workflow.start('experiment', {
      taskQueue,
      workflowId: uniqueId('vis-usage-live'),
      args: [testInput(spec)],
      ...experimentStart(spec),
    });
    await eventually('the train stage', async () =>
      (await running.query(stageQuery)) === 'train' ? true : undefined,
    );
    const later = new Date().toISOString();
    const teamU = await collectUsage(env.client, usageQuery({ team: 'team-u' }, since, later), later);
    await running.cancel();
    assert.deepEqual(
      teamU.runs.map((r) => [r.workflowId, r.owner, r.running]),
      [[running.workflowId, 'cy', true]],
    );
    const started = Date.parse(teamU.runs[0]!.allocatedSpans[0]!.from);
    assert.equal(
      teamU.runs[0]!.allocatedMs,
      2 * (Date.parse(later) - started),
      'its 2 GPUs from its start to now',
    );
    // A window that ended before everything here started finds nothing.
    const before = await collectUsage(
      env.client,
      usageQuery({}, '2020-01-01T00:00:00.000Z', '2020-01-02T00:00:00.000Z'),
      now,
    );
    assert.deepEqual([before.runs.length, before.leftOut.length], [0, 0]);
  });
});
