import type { WorkflowHandle } from '@temporalio/client';

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** Each scheduled activity's type, by its scheduled event id. */
export function activityTypesByScheduledId(events: readonly HistoryEvent[]): Map<number, string> {
  const typeOf = new Map<number, string>();
  for (const e of events) {
    const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
    if (name) typeOf.set(Number(e.eventId), name);
  }
  return typeOf;
}

/** Whether the history holds a completion or failure of an activity of this type. */
export async function activityClosed(handle: WorkflowHandle, type: string): Promise<boolean> {
  const events = (await handle.fetchHistory()).events ?? [];
  const typeOf = activityTypesByScheduledId(events);
  return events.some((e) => {
    const closed = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
    return closed && typeOf.get(Number(closed.scheduledEventId)) === type;
  });
}

/**
 * The attempt of the last run of each activity type, from the history: Temporal records only the
 * final attempt's start, so a retried activity shows > 1.
 */
export async function activityAttempts(handle: WorkflowHandle): Promise<Map<string, number>> {
  const events = (await handle.fetchHistory()).events ?? [];
  const typeOf = activityTypesByScheduledId(events);
  const attempts = new Map<string, number>();
  for (const e of events) {
    const started = e.activityTaskStartedEventAttributes;
    const name = started ? typeOf.get(Number(started.scheduledEventId)) : undefined;
    if (name) attempts.set(name, Math.max(attempts.get(name) ?? 0, started?.attempt ?? 0));
  }
  return attempts;
}
