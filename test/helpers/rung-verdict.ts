import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { pruneSignal } from '../../src/workflows/experiment-definitions.js';
import { intermediateResultSignal } from '../../src/workflows/sweep-definitions.js';

type Verdict = 'go on' | 'stop';

/**
 * The sweep's verdict on child `childId`'s validation at `step`, read from the sweep's history: the
 * intermediate result arrived (a signal event), a workflow task started after it (so the scheduler
 * saw it) completed, and a stop is a prune signal it sent to the child. Undefined until then.
 */
async function verdictInHistory(client: Client, sweepId: string, childId: string, step: number) {
  const events = (await client.workflow.getHandle(sweepId).fetchHistory()).events ?? [];
  const arrived = events.findIndex((e) => {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== intermediateResultSignal.name) return false;
    const payload = signal.input?.payloads?.[0];
    const r = payload
      ? defaultPayloadConverter.fromPayload<{ workflowId: string; step: number }>(payload)
      : undefined;
    return r?.workflowId === childId && r.step === step;
  });
  if (arrived < 0) return undefined;
  const seenFrom = events.findIndex((e, i) => i > arrived && e.workflowTaskStartedEventAttributes);
  const decided =
    seenFrom >= 0 && events.some((e, i) => i > seenFrom && e.workflowTaskCompletedEventAttributes);
  if (!decided) return undefined;
  const stopped = events.some((e) => {
    const sent = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return sent?.signalName === pruneSignal.name && sent.workflowExecution?.workflowId === childId;
  });
  return stopped ? 'stop' : 'go on';
}

/**
 * A stand-in trainer's wait at a rung, in lockstep with the sweep: returns once the scheduler let the
 * child go on; when it stopped the child, waits (heartbeating) until the stop arrives as this
 * activity's cancellation, which throws here. So a stopped child is always stopped at the rung it
 * was judged at, and never completes while its cancel is on the way (the time-skipping server
 * answers a cancel of an activity it already closed with ACTIVITY_UNKNOWN, and the workflow hangs).
 */
export async function awaitRungVerdict(client: Client, step: number): Promise<void> {
  const ctx = Context.current();
  const childId = ctx.info.workflowExecution?.workflowId ?? '';
  const sweepId = (await client.workflow.getHandle(childId).describe()).parentExecution?.workflowId;
  if (!sweepId) throw new Error(`${childId} has no parent sweep to judge it`);
  let verdict: Verdict | undefined;
  while (verdict !== 'go on') {
    ctx.heartbeat();
    verdict ??= await verdictInHistory(client, sweepId, childId, step);
    if (verdict !== 'go on') await ctx.sleep(25); // rejects with the stop once a heartbeat brought it
  }
}
