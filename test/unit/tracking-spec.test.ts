import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { MLFLOW_LIMITS } from '../../src/tracking/mlflow/client.js';
import { batches, flattenParams, runStatusOf } from '../../src/tracking/mlflow/records.js';
import { validSpecYaml } from '../helpers/specs.js';

function issuesOf(yaml: string) {
  try {
    parseExperimentSpec(yaml, 'test.yaml');
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    return err.issues;
  }
  assert.fail('the spec was accepted');
}

describe('tracking and notify in the spec', () => {
  it('accepts tracking.mlflow and notify targets', () => {
    const spec = parseExperimentSpec(
      `${validSpecYaml()}tracking:\n  mlflow: {uri: "http://127.0.0.1:5000", experiment: sokoban}\nnotify:\n  - {url: "http://127.0.0.1:9999/hook", on: [failed, stalled]}\n`,
      'test.yaml',
    );
    assert.equal(spec.tracking?.mlflow?.experiment, 'sokoban');
    assert.deepEqual(spec.notify?.[0]?.on, ['failed', 'stalled']);
  });

  it('names the field: a missing experiment, a URI with credentials, an unknown event', () => {
    const missing = issuesOf(`${validSpecYaml()}tracking:\n  mlflow: {uri: "http://h:5000"}\n`);
    assert.equal(missing[0]?.field, 'tracking.mlflow.experiment');
    const creds = issuesOf(
      `${validSpecYaml()}tracking:\n  mlflow: {uri: "http://u:secret@h:5000", experiment: e}\n`,
    );
    assert.equal(creds[0]?.field, 'tracking.mlflow.uri');
    assert.match(creds[0]?.message ?? '', /MLFLOW_TRACKING_TOKEN/);
    const scheme = issuesOf(
      `${validSpecYaml()}tracking:\n  mlflow: {uri: "file:///tmp/mlruns", experiment: e}\n`,
    );
    assert.equal(scheme[0]?.field, 'tracking.mlflow.uri');
    const event = issuesOf(`${validSpecYaml()}notify:\n  - {url: "http://h/x", on: [exploded]}\n`);
    assert.equal(event[0]?.field, 'notify[0].on[0]');
  });
});

describe('MLflow records (pure)', () => {
  it('flattens the spec into params cut to MLflow limits, leaving notify out', () => {
    const params = flattenParams({
      trainer: { overrides: { 'algorithm.lr': 0.001 }, loggers: ['console'] },
      notify: [{ url: 'http://h/secret-path' }],
      long: 'x'.repeat(7000),
    });
    assert.deepEqual(params.find((p) => p.key === 'trainer.overrides.algorithm.lr')?.value, '0.001');
    assert.equal(params.find((p) => p.key === 'trainer.loggers.0')?.value, 'console');
    assert.ok(!params.some((p) => p.key.startsWith('notify')), 'notification URLs are not params');
    assert.equal(params.find((p) => p.key === 'long')?.value.length, MLFLOW_LIMITS.paramValueLength);
  });

  it('splits log-batch requests within the per-request limits', () => {
    const metrics = Array.from({ length: 2500 }, (_, i) => ({ key: 'm', value: i, timestamp: 0, step: i }));
    const params = Array.from({ length: 150 }, (_, i) => ({ key: `p${i}`, value: '1' }));
    const out = batches({ metrics, params });
    for (const b of out) {
      assert.ok(b.params.length <= 100 && b.metrics.length <= 1000);
      assert.ok(b.params.length + b.metrics.length + b.tags.length <= 1000);
    }
    assert.equal(out.flatMap((b) => b.metrics).length, 2500);
    assert.equal(out.flatMap((b) => b.params).length, 150);
  });

  it('maps outcomes to run statuses', () => {
    assert.deepEqual(['succeeded', 'earlyStopped', 'failed', 'cancelled', 'paused'].map(runStatusOf), [
      'FINISHED',
      'FINISHED',
      'FAILED',
      'KILLED',
      'KILLED',
    ]);
  });
});
