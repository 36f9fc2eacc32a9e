import type { NotifyEvent, NotifyTarget } from './tracking.js';

/** What a workflow knows about how it ended; the activity adds the links and the text. */
export interface NotificationDraft {
  kind: 'experiment' | 'campaign' | 'sweep' | 'schedule';
  /** Workflow id and run id: with the event (and a sequence number) they make the idempotency key. */
  id: string;
  runId: string;
  namespace: string;
  name: string;
  event: NotifyEvent;
  reason?: string;
  manifestPath?: string;
  /** Distinguishes repeated events of one run (a campaign paused twice). */
  sequence?: number;
}

/** The JSON a receiver gets (Slack incoming webhooks read `text` and ignore the rest). */
export interface NotificationEvent {
  idempotencyKey: string;
  kind: NotificationDraft['kind'];
  id: string;
  runId: string;
  name: string;
  outcome: NotifyEvent;
  reason?: string;
  manifest?: string;
  report?: string;
  temporalUi: string;
  text: string;
}

/** Stable across activity retries and worker restarts: the receiver dedupes by it. */
export function idempotencyKey(d: NotificationDraft): string {
  return [d.id, d.runId, d.event, d.sequence ?? 0].join('/');
}

/** Targets that asked for this event (no `on` = every event). */
export function targetsFor(targets: NotifyTarget[] | undefined, event: NotifyEvent): NotifyTarget[] {
  return (targets ?? []).filter((t) => !t.on || t.on.includes(event));
}

const EMOJI: Record<NotifyEvent, string> = {
  succeeded: ':white_check_mark:',
  failed: ':x:',
  cancelled: ':no_entry_sign:',
  earlyStopped: ':stopwatch:',
  stalled: ':warning:',
  paused: ':double_vertical_bar:',
  failureBudgetExhausted: ':x:',
};

export function notificationEvent(
  d: NotificationDraft,
  links: { temporalUi: string; report?: string },
): NotificationEvent {
  const lines = [
    `${EMOJI[d.event]} ${d.kind} *${d.name}* (${d.id}) ${d.event}${d.reason ? `: ${d.reason.slice(0, 500)}` : ''}`,
    `<${links.temporalUi}|Temporal UI>${d.manifestPath ? ` · manifest ${d.manifestPath}` : ''}${links.report ? ` · report ${links.report}` : ''}`,
  ];
  return {
    idempotencyKey: idempotencyKey(d),
    kind: d.kind,
    id: d.id,
    runId: d.runId,
    name: d.name,
    outcome: d.event,
    reason: d.reason,
    manifest: d.manifestPath,
    report: links.report,
    temporalUi: links.temporalUi,
    text: lines.join('\n'),
  };
}
