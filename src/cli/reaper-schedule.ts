import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import { REAPER_SCHEDULE_ID, type ReaperInput } from '../domain/cluster/reaper.js';
import type { reaper } from '../workflows/reaper.js';

/**
 * Install (or update) the reaper's Temporal Schedule: every `everySeconds`, overlap skip (one pass
 * at a time), a short catch-up window so a backlog of missed passes does not pile up.
 */
export async function installReaperSchedule(
  client: Client,
  taskQueue: string,
  everySeconds: number,
  input: ReaperInput,
): Promise<void> {
  const options = {
    spec: { intervals: [{ every: `${everySeconds} seconds` }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'reaper' as const,
      taskQueue,
      args: [input] as Parameters<typeof reaper>,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
  try {
    await client.schedule.create({ scheduleId: REAPER_SCHEDULE_ID, ...options });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(REAPER_SCHEDULE_ID).update((previous) => ({ ...previous, ...options }));
  }
}
