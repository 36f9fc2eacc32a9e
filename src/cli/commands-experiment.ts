import type { Command } from 'commander';
import { CommandSchemas as S, parseCommand } from './options.js';
import { type Execute, maybeEmbedded } from './command-run.js';
import { OWNER_HELP, TEAM_HELP } from './owner-help.js';

/** run, status, logs, cancel, list, usage and report: one workflow at a time, or the list of them. */
export function addExperimentCommands(program: Command, execute: Execute): void {
  program
    .command('run')
    .description('validate an experiment spec, start the workflow and follow it')
    .argument('<spec.yaml>', 'experiment spec')
    .option('--embedded', 'own Temporal dev server (unless one answers) and a worker in this process')
    .option('--owner <user>', OWNER_HELP)
    .option('--team <team>', TEAM_HELP)
    .action(async (spec: string, opts: object) => {
      const o = parseCommand('run', S.run, { spec, ...opts });
      const { prepareRun, runCommand } = await import('./run.js');
      // Bad input is refused here, before a server, a worker or a cluster starts.
      const input = await prepareRun(o.spec, o);
      await execute((config) => maybeEmbedded(o.embedded, config, (c) => runCommand(c, input)));
    });

  program
    .command('status')
    .description("a workflow's state and its live status (experiment, campaign or sweep)")
    .argument('<workflow-id>')
    .action(async (workflowId: string) => {
      const o = parseCommand('status', S.workflow, { workflowId });
      const { statusCommand } = await import('./manage.js');
      await execute((config) => statusCommand(config, o.workflowId));
    });

  program
    .command('logs')
    .description(
      "the training job's driver log (a campaign's attempts in order), from its copy next to the manifest",
    )
    .argument('<workflow-id>')
    .option('-f, --follow', 'print what is added until the workflow closes')
    .action(async (workflowId: string, opts: object) => {
      const o = parseCommand('logs', S.logs, { workflowId, ...opts });
      const { logsCommand } = await import('./logs.js');
      await execute((config) => logsCommand(config, o.workflowId, o.follow));
    });

  program
    .command('cancel')
    .description(
      'graceful cancel: the job stops, checkpoints stay, the manifest is written, the cluster is deleted',
    )
    .argument('<workflow-id>')
    .action(async (workflowId: string) => {
      const o = parseCommand('cancel', S.workflow, { workflowId });
      const { cancelCommand } = await import('./manage.js');
      await execute((config) => cancelCommand(config, o.workflowId));
    });

  program
    .command('list')
    .description('experiments, campaigns and sweeps, from Temporal visibility (search attributes)')
    .option('--kind <kind>', 'experiment|campaign|sweep')
    .option('--sweep <sweep-id>', "a sweep's children (and the sweep)")
    .option('--campaign <campaign-id>', "a campaign's attempts (and the campaign)")
    .option(
      '--outcome <outcome>',
      'succeeded|failed|cancelled|paused|earlyStopped (the trainer stopped)|pruned (a sweep stopped it)',
    )
    .option('--name <name>', 'spec name; a trailing * matches a prefix')
    .option('--owner <user>', 'runs of this owner (RagenOwner)')
    .option('--team <team>', 'runs of this team (RagenTeam)')
    .option('--running', 'only those still running')
    .option('--limit <n>', 'newest n (default 50)')
    .action(async (opts: object) => {
      const { limit, ...filters } = parseCommand('list', S.list, opts);
      const { listCommand } = await import('./list.js');
      await execute((config) => listCommand(config, filters, limit));
    });

  program
    .command('usage')
    .description(
      'allocated and busy GPU-hours (and cost when priced) by day or week, team and owner, from visibility and the manifests',
    )
    .requiredOption('--since <date>', 'from this UTC date (2026-12-01) or time with its zone')
    .option('--until <date>', 'up to this date or time (default now)')
    .option('--by <bucket>', 'day|week (UTC days; ISO weeks from Monday)', 'day')
    .option('--format <format>', 'table|csv|json|html', 'table')
    .option('--owner <user>', 'runs of this owner (RagenOwner)')
    .option('--team <team>', 'runs of this team (RagenTeam)')
    .option('--price-per-gpu-hour <price>', "price every run at this (else each run's spec cost:, if any)")
    .option('--currency <label>', 'the label of --price-per-gpu-hour', 'USD')
    .option('--out <file>', 'write the report there instead of to stdout')
    .action(async (opts: object) => {
      const o = parseCommand('usage', S.usage, opts);
      const { usageCommand } = await import('./usage.js');
      await execute((config) => usageCommand(config, o));
    });

  program
    .command('report')
    .description('one self-contained HTML report (opens offline) of an experiment, sweep or campaign')
    .argument('[workflow-id]', 'the workflow (its archive folder is read from its input)')
    .option(
      '--from <dir>',
      'an archive folder (<archiveDir>/<name>/<workflow id>) instead of asking the server',
    )
    .option('--out <file>', 'where to write the page (default ./report-<id>.html)')
    .option(
      '--key <key>',
      'also chart this metric key (repeatable)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option('--top <n>', 'sweeps: how many of the best children to overlay (default 5)')
    .option('--force', 'replace an existing --out file')
    .action(async (workflowId: string | undefined, opts: object) => {
      const o = parseCommand('report', S.report, { workflowId, ...opts });
      const { reportCommand } = await import('./report.js');
      const input = { ...o, keys: o.key };
      await execute((config) => reportCommand(config, input));
    });
}
