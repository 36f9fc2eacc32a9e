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
 * step): `newValidations(lines)` takes the complete lines appended since its last call (the job log
 * reader gives each byte once) and returns the validations not returned before, in step order. A
 * retried activity starts again at the checkpoint's step (`afterStep`): the workflow ignores a step
 * it has already seen.
 */
export function validationReporter(afterStep: number) {
  let lastStep = afterStep;
  return {
    newValidations(lines: string): NonNullable<Progress['validation']>[] {
      const found: NonNullable<Progress['validation']>[] = [];
      for (const line of lines.split('\n')) {
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
