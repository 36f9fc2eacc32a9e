import type { Client } from '@temporalio/client';
import type { OrchestratorConfig } from '../config/config.js';
import { REAPER_SCHEDULE_ID } from '../domain/cluster/reaper.js';
import { withClient } from './client.js';
import { liveStatus } from './live-status.js';
import { installReaperSchedule } from './reaper-schedule.js';
import { statusView } from './views.js';

/** How long `status` waits for a query answer: a closed workflow needs a worker to replay it. */
const QUERY_DEADLINE_MS = 5_000;

/** `status <workflow id>`: the workflow's kind and state, and its answer to the `status` query. */
/** `status <workflow id>`: the workflow's state and its live status (experiment, campaign, sweep). */
export async function statusCommand(config: OrchestratorConfig, workflowId: string): Promise<number> {
  return withClient(config, async (client: Client) => {
    const handle = client.workflow.getHandle(workflowId);
    const d = await handle.describe();
    console.log(
      `${workflowId}: ${d.type} ${d.status.name} (run ${d.runId}, started ${d.startTime.toISOString()}${d.closeTime ? `, closed ${d.closeTime.toISOString()}` : ''})`,
    );
    try {
      console.log(
        await client.withDeadline(
          Date.now() + QUERY_DEADLINE_MS,
          async () => statusView(await liveStatus(handle)).line,
        ),
      );
    } catch (err) {
      const reason = (err as Error).message.split('\n')[0];
      const hint =
        d.status.name === 'RUNNING'
          ? ''
          : ' (a closed workflow answers only while a worker polls its task queue)';
      console.log(`(no live status from this ${d.type}: ${reason}${hint})`);
    }
    return 0;
  });
}

/** `cancel <workflow id>`: graceful: the job stops, checkpoints stay, the manifest is written, the cluster is deleted. */
export async function cancelCommand(config: OrchestratorConfig, workflowId: string): Promise<number> {
  return withClient(config, async (client) => {
    const handle = client.workflow.getHandle(workflowId);
    await handle.describe(); // an unknown id is reported as such, not as a failed cancel
    await handle.cancel();
    console.log(`cancellation requested for ${workflowId}; teardown follows`);
    return 0;
  });
}

/** `reaper install`: the Temporal Schedule that runs the teardown backstop. */
export async function reaperInstallCommand(
  config: OrchestratorConfig,
  everySeconds: number,
  graceSeconds: number,
): Promise<number> {
  return withClient(config, async (client) => {
    await installReaperSchedule(client, config.RAGEN_TASK_QUEUE, everySeconds, { graceSeconds });
    console.log(
      `reaper schedule '${REAPER_SCHEDULE_ID}': every ${everySeconds} s, grace ${graceSeconds} s, overlap skip`,
    );
    return 0;
  });
}
