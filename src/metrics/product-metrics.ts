import { Counter, Histogram, Registry } from 'prom-client';

/**
 * The product's own Prometheus metrics, recorded by the worker around activities (never in
 * workflow code). One registry per worker, handed to the interceptor and the metrics server: no
 * module-level singleton, so tests build their own.
 */
export function createProductMetrics() {
  const registry = new Registry();
  return {
    registry,
    /** Each activity run ends once: the stage it served, the workflow type, how it ended. */
    stageDuration: new Histogram({
      name: 'ragen_stage_duration_seconds',
      help: 'Duration of one activity attempt (a stage of a run: preflight, submit, train, validate, archive, ...)',
      labelNames: ['workflow_type', 'stage', 'outcome'] as const,
      // Stages run from under a second (quick activities) to days (training).
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
      registers: [registry],
    }),
    activityOutcomes: new Counter({
      name: 'ragen_activity_outcomes_total',
      help: 'Activity attempts ended, by workflow type, stage and outcome (succeeded, failed, cancelled)',
      labelNames: ['workflow_type', 'stage', 'outcome'] as const,
      registers: [registry],
    }),
    retries: new Counter({
      name: 'ragen_activity_retries_total',
      help: 'Failed activity attempts the retry policy retries (not marked non-retryable), by stage and error type',
      labelNames: ['stage', 'error_type'] as const,
      registers: [registry],
    }),
    failures: new Counter({
      name: 'ragen_activity_failures_total',
      help: 'Activity attempts that failed, by stage and error type (retryable or not)',
      labelNames: ['stage', 'error_type'] as const,
      registers: [registry],
    }),
    runsFinished: new Counter({
      name: 'ragen_runs_finished_total',
      help: 'Runs archived (every run archives at its end), by kind (experiment, campaign, sweep) and outcome; campaign attempts and sweep children count as experiments',
      labelNames: ['kind', 'outcome'] as const,
      registers: [registry],
    }),
    // No team label: the spec has no teams yet.
    gpuSecondsAllocated: new Counter({
      name: 'ragen_gpu_seconds_allocated_total',
      help: 'GPU-seconds allocated (GPUs x cluster time) by finished experiments',
      registers: [registry],
    }),
    gpuSecondsBusy: new Counter({
      name: 'ragen_gpu_seconds_busy_total',
      help: 'GPU-seconds of finished experiments spent in training and validation',
      registers: [registry],
    }),
    reaperDeletions: new Counter({
      name: 'ragen_reaper_deletions_total',
      // Unlabelled, so it is in every scrape (at 0) before the first deletion; the reaper's report names each.
      help: 'Clusters the reaper deleted (owner workflow closed or missing)',
      registers: [registry],
    }),
  };
}

export type ProductMetrics = ReturnType<typeof createProductMetrics>;
