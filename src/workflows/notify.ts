import { CancellationScope, log, workflowInfo } from '@temporalio/workflow';
import { type NotificationDraft, targetsFor } from '../domain/tracking/notification.js';
import type { NotifyEvent, NotifyTarget } from '../domain/tracking/tracking.js';
import { unwrapFailure } from './failure-info.js';
import { notify } from './policies.js';

/**
 * Posts `event` to every `notify` target that asked for it, one activity per target (a target
 * that is down does not make the others post again). Never cancelled, never fatal: a delivery
 * that fails after the activity's bounded retries is logged and the outcome stays.
 */
export async function notifyTargets(
  targets: NotifyTarget[] | undefined,
  draft: Omit<NotificationDraft, 'id' | 'runId' | 'namespace' | 'event'> & { id?: string },
  event: NotifyEvent,
): Promise<void> {
  const wanted = targetsFor(targets, event);
  if (wanted.length === 0) return;
  const { workflowId, runId, namespace } = workflowInfo();
  // The id is this workflow's, or (a schedule's event) the schedule's; the run id keeps keys apart.
  const full: NotificationDraft = { ...draft, id: draft.id ?? workflowId, runId, namespace, event };
  await CancellationScope.nonCancellable(() =>
    Promise.all(
      wanted.map((target) =>
        notify({ target, draft: full }).catch((err: unknown) => {
          log.warn('notification not delivered', { event, error: unwrapFailure(err).message });
        }),
      ),
    ),
  );
}
