import { CancelledFailure } from '@temporalio/common';
import {
  type RayHeadApi,
  type RayJobInfo,
  TERMINAL_JOB_STATES,
} from '../../backends/ray/dashboard-client.js';
import { heartbeatAndWait } from './heartbeat-loop.js';
import { pollDelays } from './poll-schedule.js';

/** Run `poll`; if the activity is cancelled meanwhile, stop the job before the cancellation propagates. */
export async function stoppingJobOnCancel<T>(
  dashboard: RayHeadApi,
  submissionId: string,
  poll: () => Promise<T>,
): Promise<T> {
  try {
    return await poll();
  } catch (err) {
    if (err instanceof CancelledFailure) await dashboard.stopJob(submissionId).catch(() => undefined);
    throw err;
  }
}

/**
 * Submit a Ray job (idempotently, by submission id) and poll it to a terminal state, heartbeating.
 * On cancellation the job is stopped before the cancellation propagates.
 */
export async function runRayJob(
  dashboard: RayHeadApi,
  submissionId: string,
  entrypoint: string,
  options: {
    pollIntervalMs: number;
    env?: Record<string, string>;
    pyModules?: readonly string[];
    /** runtime_env.working_dir: the spec's shipped `code` (code-shipping.ts). */
    workingDir?: string;
  },
): Promise<{ job: RayJobInfo; logs: string }> {
  await dashboard.submitJob(
    submissionId,
    entrypoint,
    options.env ?? {},
    options.pyModules,
    options.workingDir,
  );
  // Probe and validation jobs take seconds: short polls first, so the cluster does not sit idle
  // for most of a poll interval after the job ended (each poll is one small GET of the job's state).
  const nextDelay = pollDelays(options.pollIntervalMs);
  return stoppingJobOnCancel(dashboard, submissionId, async () => {
    for (;;) {
      const job = await dashboard.job(submissionId);
      if (job && TERMINAL_JOB_STATES.has(job.status))
        return { job, logs: await dashboard.jobLogs(submissionId) };
      await heartbeatAndWait({ submissionId, status: job?.status ?? 'UNKNOWN' }, nextDelay());
    }
  });
}
