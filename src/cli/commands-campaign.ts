import type { Command } from 'commander';
import { CommandSchemas as S, parseCommand } from './options.js';
import { type Execute, maybeEmbedded } from './command-run.js';
import { OWNER_HELP, TEAM_HELP } from './owner-help.js';

/** campaign (start, pause, resume, extend, ...): a long run resumed from its checkpoints. */
export function addCampaignCommands(program: Command, execute: Execute): void {
  const campaign = program
    .command('campaign')
    .description('resumable training: start a campaign, or control a running one')
    .argument('<spec.yaml>', 'experiment spec with a campaign: section')
    .option('--embedded', 'own Temporal dev server (unless one answers) and a worker in this process')
    .option('--owner <user>', OWNER_HELP)
    .option('--team <team>', TEAM_HELP)
    .action(async (spec: string, opts: object) => {
      const o = parseCommand('campaign', S.campaign, { spec, ...opts });
      const { prepareCampaign, campaignCommand } = await import('./campaign.js');
      const input = await prepareCampaign(o.spec, o);
      await execute((config) => maybeEmbedded(o.embedded, config, (c) => campaignCommand(c, input)));
    });
  for (const [action, description] of [
    ['pause', 'stop after the next checkpoint, free the cluster, wait for resume'],
    ['resume', 'resume a paused campaign'],
    ['cancel', 'graceful cancel: the attempt archives what exists and tears down'],
    ['status', 'phase, attempt, step, checkpoint, GPU-seconds'],
  ] as const) {
    campaign
      .command(action)
      .description(description)
      .argument('<campaign-id>')
      .action(async (workflowId: string) => {
        const o = parseCommand(`campaign ${action}`, S.workflow, { workflowId });
        const { campaignControlCommand } = await import('./campaign.js');
        await execute((config) => campaignControlCommand(config, action, o.workflowId));
      });
  }
  campaign
    .command('extend')
    .description('add training steps to a running campaign')
    .argument('<campaign-id>')
    .argument('<steps>')
    .action(async (workflowId: string, steps: string) => {
      const o = parseCommand('campaign extend', S.campaignExtend, { workflowId, steps });
      const { campaignControlCommand } = await import('./campaign.js');
      await execute((config) => campaignControlCommand(config, 'extend', o.workflowId, o.steps));
    });
}
