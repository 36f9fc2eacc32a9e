import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { OrchestratorConfig } from '../config.js';
import { resolveProvenance } from '../provenance/git.js';
import type { CampaignInput, CampaignProgress, CampaignResult } from '../spec/campaign.js';
import { loadCampaignSpec } from '../spec/load-campaign.js';
import type { campaign } from '../workflows/campaign.js';
import { extendUpdate, pauseUpdate, progressQuery, resumeUpdate } from '../workflows/campaign-definitions.js';
import { withClient } from './client.js';
import { printOutcome } from './outcome.js';

/** Validate a campaign spec and resolve provenance: bad input stops here, before anything starts. */
export async function prepareCampaign(specPath: string): Promise<CampaignInput> {
  const { experiment, budgets } = await loadCampaignSpec(specPath);
  return { spec: experiment, budgets, provenance: await resolveProvenance(experiment) };
}

export function progressLine(p: CampaignProgress): string {
  return `phase=${p.phase} attempt=${p.attempt} step=${p.step}/${p.totalTrainingSteps} checkpoint=${p.lastCheckpointStep} gpu-seconds=${p.gpuSeconds.toFixed(0)}${p.paused ? ' (paused)' : ''}`;
}

async function follow(handle: WorkflowHandle): Promise<void> {
  let last = '';
  for (;;) {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return;
    try {
      const line = progressLine(await handle.query(progressQuery));
      if (line !== last) console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
      last = line;
    } catch {
      // the first workflow task may not have run yet
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

function printCampaign(r: CampaignResult): void {
  console.log(`outcome: ${r.outcome}${r.reason ? ` — ${r.reason}` : ''}`);
  for (const a of r.attempts) {
    console.log(`  attempt ${a.attempt} ${a.workflowId}: from step ${a.startedFromStep} -> ${a.outcome} (${a.ended.type}) checkpoint ${a.checkpointStepAfter} manifest ${a.manifestPath}`);
  }
  console.log(`gpu-seconds: ${r.gpuSeconds.toFixed(0)}; campaign manifest: ${r.manifestPath ?? '(not written)'}`);
}

/** `campaign <spec>`: start the campaign workflow and follow it until it closes. */
export async function campaignCommand(config: OrchestratorConfig, input: CampaignInput): Promise<number> {
  return withClient(config, async (client) => {
    const workflowId = `campaign-${input.spec.name}-${randomUUID().slice(0, 8)}`;
    const handle = await client.workflow.start<typeof campaign>('campaign', { taskQueue: config.RAGEN_TASK_QUEUE, workflowId, args: [input] });
    console.log(`started ${workflowId}; control it with: campaign pause|resume|extend <steps>|cancel ${workflowId}`);
    await follow(handle);
    return printOutcome('campaign', workflowId, handle.result(), printCampaign);
  });
}

/** `campaign pause|resume|extend <steps>|cancel|status <id>`. */
export async function campaignControlCommand(config: OrchestratorConfig, action: string, workflowId: string, steps?: string): Promise<number> {
  if (action === 'extend' && !(Number.isInteger(Number(steps)) && Number(steps) > 0)) {
    console.error('campaign extend: give the number of extra steps as a positive integer, e.g. campaign extend <id> 100');
    return 2;
  }
  return withClient(config, async (client) => {
    const handle = client.workflow.getHandle(workflowId);
    // Updates: the campaign refuses what cannot apply (the error says why) and answers its new progress.
    if (action === 'pause') console.log(progressLine(await handle.executeUpdate(pauseUpdate)));
    else if (action === 'resume') console.log(progressLine(await handle.executeUpdate(resumeUpdate)));
    else if (action === 'extend') console.log(progressLine(await handle.executeUpdate(extendUpdate, { args: [Number(steps)] })));
    else if (action === 'cancel') {
      await handle.cancel();
      console.log(`cancellation requested for ${workflowId}; the attempt archives and tears down`);
    } else if (action === 'status') console.log(progressLine(await handle.query(progressQuery)));
    else return 2;
    return 0;
  });
}
