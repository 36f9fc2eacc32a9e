import type { Progress } from '../../domain/run/progress.js';
import type { StepMetrics } from './train-log.js';

/** The `val-env/...` metrics of one step line, or undefined when the line carries no in-loop validation. */
export function validationOfStep(parsed: StepMetrics): Progress['validation'] {
  const metrics = Object.fromEntries(
    Object.entries(parsed.metrics).filter(([k]) => k.startsWith('val-env/')),
  );
  return Object.keys(metrics).length > 0 ? { step: parsed.step, metrics } : undefined;
}

/**
 * In-loop validations of a training job, each reported once (one signal per validation, never per
 * step): `newValidations(steps)` takes the step lines appended since its last call, as feedTrainLog
 * parsed them (the job log reader gives each byte once), and returns the validations not returned
 * before, in step order. A
 * retried activity starts again at the checkpoint's step (`afterStep`): the workflow ignores a step
 * it has already seen. With `onlyAt` (ASHA's rungs), a validation is returned only when it is the
 * first at or past one of those steps: each signal is about 9 history events (the child's and the
 * sweep's), so a long run's history grows with its rungs, not its validations.
 */
export function validationReporter(afterStep: number, onlyAt?: readonly number[]) {
  let lastStep = afterStep;
  const wanted = (previous: number, step: number) =>
    onlyAt === undefined || onlyAt.some((r) => r > previous && r <= step);
  return {
    newValidations(steps: StepMetrics[]): NonNullable<Progress['validation']>[] {
      const found: NonNullable<Progress['validation']>[] = [];
      for (const parsed of steps) {
        const validation = parsed.step > lastStep ? validationOfStep(parsed) : undefined;
        if (!validation) continue;
        if (wanted(lastStep, validation.step)) found.push(validation);
        lastStep = validation.step;
      }
      return found;
    },
  };
}
