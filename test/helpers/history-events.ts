/**
 * Facts read from a recorded history (the JSON that `historyToJSON` writes, or a fetched history
 * converted by it): the patch markers it carries, the activities it scheduled, how children ended.
 */
import { readFileSync } from 'node:fs';

type Payloads = { payloads?: { data?: string }[] };
type Failure = { cause?: Failure; applicationFailureInfo?: { type?: string } };
export interface HistoryEvent {
  eventType: string;
  workflowExecutionStartedEventAttributes?: { workflowType: { name: string } };
  workflowExecutionCompletedEventAttributes?: { result?: Payloads };
  markerRecordedEventAttributes?: { markerName: string; details?: Record<string, Payloads> };
  activityTaskScheduledEventAttributes?: { activityType: { name: string } };
  childWorkflowExecutionFailedEventAttributes?: { failure?: Failure };
}
export interface HistoryJson {
  events: HistoryEvent[];
}

export const readHistory = (path: string): HistoryJson =>
  JSON.parse(readFileSync(path, 'utf8')) as HistoryJson;

/** A JSON payload's value (json/plain, base64 as historyToJSON writes it). */
const payloadValue = (p: Payloads | undefined): unknown => {
  const data = p?.payloads?.[0]?.data;
  return data === undefined ? undefined : JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
};

/** The workflow type the history is of. */
export const workflowTypeOf = (h: HistoryJson): string | undefined =>
  h.events[0]?.workflowExecutionStartedEventAttributes?.workflowType.name;

/** The ids of its `patched()`/`deprecatePatch()` markers (core_patch, the SDK's marker name). */
export function patchMarkers(h: HistoryJson): { id: string; deprecated: boolean }[] {
  return h.events.flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_patch') return [];
    const data = payloadValue(m.details?.['patch-data'] ?? m.details?.['patch_data']) as
      { id: string; deprecated: boolean } | undefined;
    return data ? [data] : [];
  });
}

/** The activity types it scheduled, in order (with repeats). */
export const scheduledActivities = (h: HistoryJson): string[] =>
  h.events.flatMap((e) => {
    const name = e.activityTaskScheduledEventAttributes?.activityType.name;
    return name ? [name] : [];
  });

/** The application failure types of its children that failed (each failure's whole cause chain). */
export const childFailureTypes = (h: HistoryJson): string[] =>
  h.events.flatMap((e) => {
    const types: string[] = [];
    for (let f = e.childWorkflowExecutionFailedEventAttributes?.failure; f; f = f.cause)
      if (f.applicationFailureInfo?.type) types.push(f.applicationFailureInfo.type);
    return types;
  });

/** The workflow's result, when it completed. */
export const resultOf = (h: HistoryJson): unknown =>
  payloadValue(h.events.at(-1)?.workflowExecutionCompletedEventAttributes?.result);
