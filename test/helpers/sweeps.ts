import { parseSweepMapping } from '../../src/cli/spec-files/load-sweep.js';
import type { SweepInput, SweepSpec } from '../../src/domain/sweep/sweep.js';
import { testInput, testSpec } from './specs.js';

/** A sweep over `trainer.seedTrain` values of the test experiment, validated like a loaded one. */
export function seedSweep(
  seeds: number[],
  extra: Partial<Pick<SweepSpec, 'concurrency' | 'failureBudget' | 'objective'>> = {},
  storageRoot?: string,
): SweepSpec {
  return parseSweepMapping(
    {
      name: 'seed-sweep',
      base: testSpec({}, storageRoot),
      parameters: { grid: { 'trainer.seedTrain': seeds } },
      ...extra,
    },
    'test sweep',
  );
}

export function sweepInput(sweep: SweepSpec, extra: Partial<SweepInput> = {}): SweepInput {
  return { sweep, provenance: testInput().provenance, ...extra };
}
