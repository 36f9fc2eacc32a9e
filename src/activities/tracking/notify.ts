import { access } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ErrorTypes, TransientErrorTypes } from '../../domain/failures/error-types.js';
import { type NotificationDraft, notificationEvent } from '../../domain/tracking/notification.js';
import type { NotifyTarget } from '../../domain/tracking/tracking.js';
import { permanent, transient } from '../../errors/domain-error.js';
import { verdictOfStatus } from '../../errors/external-failures.js';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** The Temporal UI page of a workflow run (RAGEN_TEMPORAL_UI_URL, default the dev server's UI). */
export function temporalUiLink(
  base: string,
  d: Pick<NotificationDraft, 'namespace' | 'id' | 'runId' | 'kind'>,
): string {
  const ns = `${base.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(d.namespace)}`;
  if (d.kind === 'schedule') return `${ns}/schedules/${encodeURIComponent(d.id)}`;
  return `${ns}/workflows/${encodeURIComponent(d.id)}/${encodeURIComponent(d.runId)}/history`;
}

/**
 * Posts one ending event to one target as JSON (kind, id, name, outcome, reason, manifest and
 * report paths, the Temporal UI link, Slack-compatible `text`), with an `Idempotency-Key` header
 * (also in the body) that is the same on every retry, so a receiver can drop a repeat: Temporal
 * schedules this activity once per workflow step (a worker restart replays its recorded result),
 * but a retry after a lost reply posts again. 2xx delivers; 5xx/408/429 and unreachable receivers
 * are retried by the quick profile (bounded); other answers are refused for good. The workflow
 * logs a failure and keeps its outcome.
 */
export function createNotify(env: NodeJS.ProcessEnv = process.env) {
  const uiBase = env.RAGEN_TEMPORAL_UI_URL || 'http://localhost:8233';
  return async function notify(input: {
    target: NotifyTarget;
    draft: NotificationDraft;
  }): Promise<{ status: number; idempotencyKey: string }> {
    const { draft, target } = input;
    const report = draft.manifestPath ? join(dirname(draft.manifestPath), 'report.html') : undefined;
    const event = notificationEvent(draft, {
      temporalUi: temporalUiLink(uiBase, draft),
      report: report && (await exists(report)) ? report : undefined,
    });
    const where = new URL(target.url).origin; // the path may be a receiver's secret: never logged
    let res: Response;
    try {
      res = await fetch(target.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': event.idempotencyKey },
        body: JSON.stringify(event),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw transient(
        TransientErrorTypes.NotificationUndelivered,
        `notification receiver ${where} did not answer: ${(err as Error).message}`,
      );
    }
    await res.arrayBuffer().catch(() => undefined);
    if (res.ok) return { status: res.status, idempotencyKey: event.idempotencyKey };
    const what = `notification receiver ${where} answered ${res.status}`;
    if (verdictOfStatus(res.status) === 'transient')
      throw transient(TransientErrorTypes.NotificationUndelivered, what);
    throw permanent(ErrorTypes.NotificationRejected, `${what}; check notify[].url`);
  };
}
