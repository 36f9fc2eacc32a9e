import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCampaignSpec } from '../../src/cli/spec-files/load-campaign.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { validSpecYaml } from '../helpers/specs.js';

describe('campaign spec', () => {
  it('is an experiment spec plus optional budgets with defaults', () => {
    const spec = parseCampaignSpec(`${validSpecYaml()}campaign:\n  maxAttempts: 3\n`);
    assert.equal(spec.experiment.name, 'sokoban-test');
    assert.deepEqual(spec.budgets, {
      maxAttempts: 3,
      maxAttemptsWithoutNewCheckpoint: 2,
      historyEventsBeforeContinueAsNew: 2000,
    });
  });

  it('names bad budget and experiment fields together', () => {
    assert.throws(
      () =>
        parseCampaignSpec(
          `${validSpecYaml().replace('nnodes: 2', 'nnodes: 4')}campaign:\n  maxAttempts: 0\n  retries: 3\n`,
        ),
      (err: unknown) => {
        assert.ok(err instanceof SpecError);
        assert.match(err.message, /campaign\.maxAttempts: .*>0|campaign\.maxAttempts: .*greater than 0/i);
        assert.match(err.message, /campaign\.retries: unknown field/);
        assert.match(err.message, /trainer\.nnodes/);
        return true;
      },
    );
  });
});
