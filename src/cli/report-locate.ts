import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { z } from 'zod';
import { ExperimentResultSchema } from '../domain/run/experiment-input.js';
import { withPrunedName } from '../domain/run/pruned-name.js';
import { runFolder } from '../domain/spec/paths.js';
import type { StageRecord } from '../domain/run/results.js';
import type { ReportSource } from '../report/write-report.js';
import { UserError } from '../config/user-errors.js';

// The workflow's own input says where its archive folder is; read loosely, so inputs of older versions still work.
const Storage = z.object({ name: z.string(), storage: z.object({ archiveDir: z.string() }) });
const SweepInput = z.object({
  sweep: z.object({ name: z.string(), base: z.object({ storage: z.object({ archiveDir: z.string() }) }) }),
});
const CampaignInput = z.object({ spec: Storage, budgets: z.unknown() });
const ExperimentInput = z.object({ spec: Storage });

/** The kind and archive folder of a workflow, from the input of its current run (any state, any kind). */
export function sourceFromInput(workflowId: string, input: unknown): ReportSource {
  const sweep = SweepInput.safeParse(input);
  if (sweep.success) {
    const s = sweep.data.sweep;
    return { kind: 'sweep', dir: runFolder(s.base.storage.archiveDir, s.name, workflowId) };
  }
  const campaign = CampaignInput.safeParse(input);
  if (campaign.success && campaign.data.budgets !== undefined) {
    const s = campaign.data.spec;
    return { kind: 'campaign', dir: runFolder(s.storage.archiveDir, s.name, workflowId) };
  }
  const experiment = ExperimentInput.safeParse(input);
  if (experiment.success) {
    const s = experiment.data.spec;
    return { kind: 'experiment', dir: runFolder(s.storage.archiveDir, s.name, workflowId) };
  }
  throw new UserError(
    `workflow '${workflowId}' is not an experiment, sweep or campaign of this orchestrator (its input names no spec): give one of those, or an archive folder with --from`,
  );
}

/** Every stage record of a closed experiment, from its result (or the result its failure carries). */
async function completeStages(client: Client, workflowId: string): Promise<StageRecord[] | undefined> {
  let result: unknown;
  try {
    result = await client.workflow.getHandle(workflowId).result();
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure)
      result = err.cause.details?.[0];
  }
  const parsed = ExperimentResultSchema.safeParse(withPrunedName(result));
  return parsed.success ? parsed.data.stages : undefined;
}

/** The input a run of a workflow started with (its first history event: one page of one event). */
export async function startInput(client: Client, workflowId: string, runId: string): Promise<unknown> {
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: 1,
  });
  const payload = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  return payload ? client.options.loadedDataConverter.payloadConverter.fromPayload(payload) : undefined;
}

/**
 * Where a workflow's report comes from: its archive folder (from the first event of its current
 * run, so it works for running and closed workflows alike) and, for a closed experiment, the
 * stage records through teardown from its result.
 */
export async function locateRun(
  client: Client,
  workflowId: string,
): Promise<ReportSource & { status: string }> {
  const handle = client.workflow.getHandle(workflowId);
  const d = await handle.describe(); // an unknown id is WorkflowNotFoundError: one line naming the fix
  const source = sourceFromInput(workflowId, await startInput(client, workflowId, d.runId));
  const status = d.status.name;
  if (source.kind === 'experiment' && status !== 'RUNNING') {
    const stages = await completeStages(client, workflowId);
    if (stages) return { ...source, completeStages: stages, status };
  }
  return { ...source, status };
}
