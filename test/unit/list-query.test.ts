import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listQuery } from '../../src/cli/list-query.js';
import { fmtGpuHours, listTable } from '../../src/cli/list.js';
import { CommandSchemas, parseCommand } from '../../src/cli/options.js';
import { visibleStageOf } from '../../src/workflows/experiment-visibility.js';
import { devServerSearchAttributeArgs } from '../../src/workflows/search-attributes.js';

describe('list: the visibility query', () => {
  it('only this project’s workflows without filters', () => {
    assert.equal(listQuery({ running: false }), 'RagenKind IS NOT NULL');
  });

  it('ANDs every filter given, a trailing * of --name as a prefix', () => {
    assert.equal(
      listQuery({
        kind: 'experiment',
        sweep: 'sweep-a-1',
        outcome: 'failed',
        name: 'sokoban*',
        running: true,
      }),
      "RagenKind = 'experiment' AND RagenSweepId = 'sweep-a-1' AND RagenOutcome = 'failed' AND RagenName STARTS_WITH 'sokoban' AND ExecutionStatus = 'Running'",
    );
    assert.equal(
      listQuery({ campaign: 'c-1', name: 'exact', running: false }),
      "RagenKind IS NOT NULL AND RagenCampaignId = 'c-1' AND RagenName = 'exact'",
    );
  });

  it('the flags are checked first: a quote, an unknown kind or outcome, a bad limit exit 2 naming the flag', () => {
    const bad = (raw: object, pattern: RegExp) =>
      assert.throws(
        () => parseCommand('list', CommandSchemas.list, raw),
        (e: Error & { exitCode?: number }) => pattern.test(e.message) && e.exitCode === 2,
      );
    bad({ name: "x' OR 1=1" }, /--name: quotes and backslashes/);
    bad({ kind: 'job' }, /--kind: expected experiment, campaign or sweep/);
    bad({ outcome: 'ok' }, /--outcome: expected one of succeeded, failed/);
    bad({ limit: '0' }, /--limit: expected a positive whole number/);
    assert.deepEqual(parseCommand('list', CommandSchemas.list, { running: true }), {
      running: true,
      limit: 50,
    });
  });

  it('a table with a header, columns aligned', () => {
    const row = {
      workflowId: 'experiment-a',
      kind: 'experiment',
      name: 'a',
      status: 'running',
      stage: 'train',
      outcome: '-',
      validationSuccess: '-',
      checkpointStep: '40',
      gpuHours: '1.25',
      parent: '-',
      started: '2026-12-04T00:00:00Z',
    };
    const lines = listTable([row, { ...row, workflowId: 'x', stage: 'cluster' }]).split('\n');
    assert.equal(lines.length, 3);
    assert.equal(lines[0]?.indexOf('STAGE'), lines[1]?.indexOf('train'));
    assert.equal(lines[2]?.indexOf('cluster'), lines[1]?.indexOf('train'));
    assert.equal(lines[0]?.indexOf('GPU-HOURS'), lines[1]?.indexOf('1.25'));
  });

  it('GPU-hours to 3 significant digits, from the GPU-seconds attribute', () => {
    assert.equal(fmtGpuHours(4500), '1.25');
    assert.equal(fmtGpuHours(15), '0.00417');
    assert.equal(fmtGpuHours(1_123_200), '312');
    assert.equal(fmtGpuHours(0), '0');
  });
});

describe('search attributes', () => {
  it('the dev server flags name each attribute with its type', () => {
    const args = devServerSearchAttributeArgs();
    assert.ok(args.includes('RagenValidationSuccess=Double'));
    assert.ok(args.includes('RagenCheckpointStep=Int'));
    assert.ok(args.includes('RagenStage=Keyword'));
    assert.ok(args.includes('RagenGpuSeconds=Double'));
    assert.ok(args.includes('RagenOwner=Keyword') && args.includes('RagenTeam=Keyword'));
    assert.equal(args.filter((a) => a === '--search-attribute').length, 12);
  });

  it('RagenStage is the phase: a teardown between resubmits stays in cluster, the last one is finish', () => {
    assert.equal(visibleStageOf('verify', 'preflight'), 'preflight');
    assert.equal(visibleStageOf('join', 'cluster'), 'cluster');
    assert.equal(visibleStageOf('teardown', 'cluster'), 'cluster');
    assert.equal(visibleStageOf('archive', 'validate'), 'finish');
    assert.equal(visibleStageOf('teardown', 'finish'), 'finish');
  });
});
