import { randomUUID } from 'node:crypto';
import type { OrchestratorConfig } from '../config/config.js';
import { resolveProvenance } from '../provenance/git.js';
import { checkShippedCode } from './spec-files/code-check.js';
import type { CampaignInput, CampaignResult } from '../domain/campaign/campaign.js';
import { loadCampaignSpec } from './spec-files/load-campaign.js';
import type { campaign } from '../workflows/campaign.js';
import { extendUpdate, pauseUpdate, progressQuery, resumeUpdate } from '../workflows/campaign-definitions.js';
import { withClient } from './client.js';
import { checkLocalStorageWritable } from './spec-files/local-storage-check.js';
import { resumeLossWarning } from '../domain/checkpoints/resume-loss.js';
import { startOrExplain } from './start-failures.js';
import { follow } from './follow.js';
import { printOutcome } from './outcome.js';
import { campaignStart } from './start-options.js';
import { type Who, owned } from './owned.js';
import { campaignView } from './views.js';

/** Validate a campaign spec and resolve provenance: bad input stops here, before anything starts. */
export async function prepareCampaign(specPath: string, who: Who = {}): Promise<CampaignInput> {
  const loaded = await loadCampaignSpec(specPath);
  const { budgets } = loaded;
  const experiment = owned(loaded.experiment, who);
  await checkShippedCode(experiment, specPath);
  await checkLocalStorageWritable(experiment, specPath);
  const warning = resumeLossWarning(experiment.trainer);
  if (warning) console.error(warning);
  return { spec: experiment, budgets, provenance: await resolveProvenance(experiment) };
}

function printCampaign(r: CampaignResult): void {
  console.log(`outcome: ${r.outcome}${r.reason ? ` — ${r.reason}` : ''}`);
  for (const a of r.attempts) {
    console.log(
      `  attempt ${a.attempt} ${a.workflowId}: from step ${a.startedFromStep} -> ${a.outcome} (${a.ended.type}) checkpoint ${a.checkpointStepAfter} manifest ${a.manifestPath}`,
    );
  }
  console.log(
    `gpu-seconds: ${r.gpuSeconds.toFixed(0)}; campaign manifest: ${r.manifestPath ?? '(not written)'}`,
  );
}

/** `campaign <spec>`: start the campaign workflow and follow it until it closes. */
export async function campaignCommand(config: OrchestratorConfig, input: CampaignInput): Promise<number> {
  return withClient(config, async (client) => {
    const workflowId = `campaign-${input.spec.name}-${randomUUID().slice(0, 8)}`;
    const handle = await startOrExplain(client, config.temporal, () =>
      client.workflow.start<typeof campaign>('campaign', {
        taskQueue: config.RAGEN_TASK_QUEUE,
        workflowId,
        args: [input],
        ...campaignStart(input.spec, workflowId),
      }),
    );
    console.log(
      `started ${workflowId}; control it with: campaign pause|resume|extend <steps>|cancel ${workflowId}`,
    );
    await follow(handle, async () => campaignView(await handle.query(progressQuery)));
    return printOutcome('campaign', workflowId, handle.result(), printCampaign);
  });
}

/** `campaign pause|resume|extend <steps>|cancel|status <id>`. */
export async function campaignControlCommand(
  config: OrchestratorConfig,
  action: 'pause' | 'resume' | 'extend' | 'cancel' | 'status',
  workflowId: string,
  steps?: number,
): Promise<number> {
  return withClient(config, async (client) => {
    const handle = client.workflow.getHandle(workflowId);
    if (action === 'status') {
      console.log(campaignView(await handle.query(progressQuery)).line);
      return 0;
    }
    if (action === 'cancel') {
      await handle.cancel();
      console.log(`cancellation requested for ${workflowId}; the attempt archives and tears down`);
      return 0;
    }
    // Updates: the campaign refuses what cannot apply (the error says why) and answers its new progress.
    const progress =
      action === 'pause'
        ? await handle.executeUpdate(pauseUpdate)
        : action === 'resume'
          ? await handle.executeUpdate(resumeUpdate)
          : await handle.executeUpdate(extendUpdate, { args: [steps ?? 0] });
    console.log(campaignView(progress).line);
    return 0;
  });
}
