import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { type TrainHeartbeat, TrainHeartbeatSchema } from '../domain/run/progress.js';
import type { WorkflowStatus } from '../domain/run/workflow-status.js';
import { statusQuery } from '../workflows/shared-definitions.js';

/**
 * The `status` query's answer with the live training step: the train activity signals only its
 * first step and some checkpoints (each signal is history), its heartbeat carries every step.
 */
export async function liveStatus(handle: WorkflowHandle): Promise<WorkflowStatus> {
  const status = await handle.query(statusQuery);
  if (status.kind !== 'experiment' || status.stage !== 'train') return status;
  return withTrainHeartbeat(status, await trainHeartbeat(handle).catch(() => undefined));
}

/** The latest heartbeat of the workflow's running train activity (describe: no history read). */
export async function trainHeartbeat(handle: WorkflowHandle): Promise<TrainHeartbeat | undefined> {
  const { raw } = await handle.describe();
  const train = raw.pendingActivities?.find((a) => a.activityType?.name === 'train');
  const payload = train?.heartbeatDetails?.payloads?.[0];
  if (!payload) return undefined;
  const parsed = TrainHeartbeatSchema.safeParse(defaultPayloadConverter.fromPayload(payload));
  return parsed.success ? parsed.data : undefined;
}

/** Steps and checkpoint only move forward: the later of the query's and the heartbeat's. */
export function withTrainHeartbeat<S extends { lastStep: number; lastCheckpointStep: number }>(
  status: S,
  beat: Pick<TrainHeartbeat, 'step' | 'lastCheckpointStep'> | undefined,
): S {
  if (!beat) return status;
  return {
    ...status,
    lastStep: Math.max(status.lastStep, beat.step),
    lastCheckpointStep: Math.max(status.lastCheckpointStep, beat.lastCheckpointStep),
  };
}
