import type { Progress } from '../domain/progress.js';
import { type StepMetrics, parseStepLine } from './train-log.js';

/** The `val-env/...` metrics of one step line, or undefined when the line carries no in-loop validation. */
export function validationOfStep(parsed: StepMetrics): Progress['validation'] {
  const metrics = Object.fromEntries(
    Object.entries(parsed.metrics).filter(([k]) => k.startsWith('val-env/')),
  );
  return Object.keys(metrics).length > 0 ? { step: parsed.step, metrics } : undefined;
}

/**
 * In-loop validations of a training job, each reported once (one signal per validation, never per
 * step): `newValidations(logs)` reads only what was appended since its last call and returns the
 * validations it has not returned before, in step order. A retried activity starts again at the
 * checkpoint's step (`afterStep`): the workflow ignores a step it has already seen.
 */
export function validationReporter(afterStep: number) {
  let readUpTo = 0;
  let lastStep = afterStep;
  return {
    newValidations(logs: string): NonNullable<Progress['validation']>[] {
      // The job log only grows; a shorter one (a restarted job) is read from the start.
      const start = logs.length >= readUpTo ? logs.lastIndexOf('\n', readUpTo - 1) + 1 : 0;
      const complete = logs.lastIndexOf('\n') + 1; // a line still being written waits for its newline
      if (complete <= start) return [];
      readUpTo = complete;
      const found: NonNullable<Progress['validation']>[] = [];
      for (const line of logs.slice(start, complete).split('\n')) {
        const parsed = parseStepLine(line);
        const validation = parsed && parsed.step > lastStep ? validationOfStep(parsed) : undefined;
        if (!validation) continue;
        lastStep = validation.step;
        found.push(validation);
      }
      return found;
    },
  };
}
