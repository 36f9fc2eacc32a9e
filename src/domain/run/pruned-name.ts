/**
 * In 1.0 a run that a sweep's scheduler stopped had the outcome `stoppedEarly`, its reason
 * under `stoppedEarly` and the sweep counted them as `stoppedEarly`: names too close to the
 * trainer's own `earlyStopped`. All three are now `pruned`. Data written by 1.0 (manifests on disk,
 * results in histories, a sweep's carried results) is read through this function, so an old value
 * means what the new one does.
 */
export function withPrunedName<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => withPrunedName(v)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const { stoppedEarly, ...out } = value as Record<string, unknown>;
  if (stoppedEarly !== undefined) out.pruned = stoppedEarly;
  if (out.outcome === 'stoppedEarly') out.outcome = 'pruned';
  // A sweep's children (manifest, carried results) and its counts.
  for (const key of ['children', 'results', 'carry', 'counts'])
    if (key in out) out[key] = withPrunedName(out[key]);
  return out as T;
}
