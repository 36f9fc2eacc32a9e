import { workflowInfo } from '@temporalio/workflow';
import { SCHEDULE_MEMO_KEY, type ScheduleMemo } from '../domain/spec/schedule.js';
import type { NotifyTarget } from '../domain/tracking/tracking.js';
import { notifyTargets } from './notify.js';

/**
 * A scheduled run that is about to fail tells its schedule's `paused` event: with pauseOnFailure
 * (the default) the Temporal server pauses the schedule when the run fails, and no code of ours
 * runs then, so the run that causes it is the one that can tell. The schedule's memo on the run
 * (src/cli/schedule.ts) names the schedule; runs without it (not scheduled) tell nothing. Keyed by the schedule id and this run's id: one event per pause.
 */
export async function notifyScheduleWillPause(
  targets: NotifyTarget[] | undefined,
  name: string,
  reason: string | undefined,
): Promise<void> {
  const info = workflowInfo();
  const memo = info.memo?.[SCHEDULE_MEMO_KEY] as ScheduleMemo | undefined;
  if (!memo?.pauseOnFailure) return;
  await notifyTargets(
    targets,
    {
      kind: 'schedule',
      id: memo.scheduleId,
      name,
      reason: `paused by its failed run ${info.workflowId}${reason ? ` (${reason.slice(0, 300)})` : ''}; unpause with: schedule unpause ${memo.scheduleId}`,
    },
    'paused',
  );
}
