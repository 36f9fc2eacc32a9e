import type { OrchestratorConfig } from '../config.js';
import { REAPER_SCHEDULE_ID } from '../spec/reaper.js';
import { statusQuery } from '../workflows/definitions.js';
import type { WorkflowStatus } from '../spec/workflow-status.js';
import { progressLine } from './campaign.js';
import { withClient } from './client.js';
import { installReaperSchedule } from './reaper-schedule.js';
import { sweepStatusLine } from './sweep.js';
import { statusLine } from './watch.js';

/** One line for the answer of the `status` query, whatever kind of workflow gave it. */
function statusText(s: WorkflowStatus): string {
  if (s.kind === 'campaign') return progressLine(s);
  if (s.kind === 'sweep') return sweepStatusLine(s);
  return statusLine(s);
}

/** `status <workflow id>`: the workflow's state and, while it runs, its live status. */
export async function statusCommand(config: OrchestratorConfig, workflowId: string): Promise<number> {
  return withClient(config, async (client) => {
    const handle = client.workflow.getHandle(workflowId);
    const description = await handle.describe();
    console.log(`${workflowId}: ${description.status.name} (run ${description.runId}, started ${description.startTime.toISOString()})`);
    try {
      console.log(statusText(await handle.query(statusQuery)));
    } catch (err) {
      console.log(`(no live status: ${(err as Error).message})`);
    }
    return 0;
  });
}

/** `cancel <workflow id>`: graceful: the job stops, checkpoints stay, the manifest is written, the cluster is deleted. */
export async function cancelCommand(config: OrchestratorConfig, workflowId: string): Promise<number> {
  return withClient(config, async (client) => {
    await client.workflow.getHandle(workflowId).cancel();
    console.log(`cancellation requested for ${workflowId}; teardown follows`);
    return 0;
  });
}

/** `reaper install`: the Temporal Schedule that runs the teardown backstop. */
export async function reaperInstallCommand(config: OrchestratorConfig, everySeconds: number, graceSeconds: number): Promise<number> {
  if (!(everySeconds > 0) || !(graceSeconds >= 0)) {
    console.error('reaper install: --every must be > 0 and --grace >= 0 (seconds)');
    return 2;
  }
  return withClient(config, async (client) => {
    await installReaperSchedule(client, config.RAGEN_TASK_QUEUE, everySeconds, { graceSeconds });
    console.log(`reaper schedule '${REAPER_SCHEDULE_ID}': every ${everySeconds} s, grace ${graceSeconds} s, overlap skip`);
    return 0;
  });
}
