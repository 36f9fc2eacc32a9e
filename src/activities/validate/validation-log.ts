import { parseStepLine } from '../train/train-log.js';

/**
 * What verl's validation printed (contract §1.5, §4.1): the console line of the validation step,
 * `step:N - val-env/<tag>/success:x - val-env/<tag>/pass@k:y - …` (a Ray log prefix allowed).
 */
export interface TrainerValidation {
  step: number;
  success: number;
  /** `val-env/<tag>/pass@k` by k, where printed. */
  passAtK: Record<string, number>;
  /** Every `val-env/` and `val-core/` metric of that line. */
  metrics: Record<string, number>;
}

/** The last console line with `val-env/<envTag>/success`; undefined when there is none. */
export function readTrainerValidation(logs: string, envTag: string): TrainerValidation | undefined {
  const prefix = `val-env/${envTag}/`;
  let found: TrainerValidation | undefined;
  for (const line of logs.split('\n')) {
    const parsed = parseStepLine(line);
    const success = parsed?.metrics[`${prefix}success`];
    if (!parsed || success === undefined) continue;
    const passAtK: Record<string, number> = {};
    const metrics: Record<string, number> = {};
    for (const [key, value] of Object.entries(parsed.metrics)) {
      if (key.startsWith('val-env/') || key.startsWith('val-core/')) metrics[key] = value;
      const k = key.startsWith(prefix) ? /^pass@(\d+)$/.exec(key.slice(prefix.length))?.[1] : undefined;
      if (k) passAtK[k] = value;
    }
    found = { step: parsed.step, success, passAtK, metrics };
  }
  return found;
}

/** The env tags that printed a `val-env/<tag>/success`, to name them when the asked-for one is missing. */
export function validationTagsIn(logs: string): string[] {
  const tags = new Set<string>();
  for (const line of logs.split('\n')) {
    for (const key of Object.keys(parseStepLine(line)?.metrics ?? {})) {
      const tag = /^val-env\/(.+)\/success$/.exec(key)?.[1];
      if (tag) tags.add(tag);
    }
  }
  return [...tags];
}
