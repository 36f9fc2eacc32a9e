import type { MlflowClient, MlflowRun, MlflowTag } from './client.js';
import { TAGS, batches, tag } from './records.js';

/**
 * The run tagged with `workflowId`, created when there is none: a retried activity (or a campaign
 * continued as new) finds the run it made before instead of making a second one.
 */
export async function findOrCreateRun(
  client: MlflowClient,
  init: { experimentId: string; workflowId: string; runName: string; tags: MlflowTag[] },
): Promise<MlflowRun> {
  const [existing] = await client.runsByTag(init.experimentId, TAGS.workflowId, init.workflowId);
  if (existing) return existing;
  const info = await client.createRun({
    experimentId: init.experimentId,
    runName: init.runName,
    startTime: Date.now(),
    tags: [...tag(TAGS.workflowId, init.workflowId), ...init.tags],
  });
  return { info, data: { tags: [...tag(TAGS.workflowId, init.workflowId), ...init.tags] } };
}

export const tagOf = (run: MlflowRun, key: string) => run.data?.tags?.find((t) => t.key === key)?.value;

/** Params, tags and metrics in as few log-batch calls as MLflow's limits allow. */
export async function logAll(
  client: MlflowClient,
  runId: string,
  data: Parameters<typeof batches>[0],
): Promise<void> {
  for (const batch of batches(data)) await client.logBatch(runId, batch);
}
