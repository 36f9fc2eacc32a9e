import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { type OrchestratorConfig, REPO_ROOT } from '../config.js';
import type { Client } from '@temporalio/client';
import { CommandSchemas as S, parseCommand } from './options.js';

/** What a command returns: the process's exit code. */
type Run = (config: OrchestratorConfig) => Promise<number>;

/** Run on the embedded stack (own dev server unless one answers, worker in this process) or not. */
async function maybeEmbedded(
  embedded: boolean,
  config: OrchestratorConfig,
  fn: (c: OrchestratorConfig) => Promise<number>,
) {
  if (!embedded) return fn(config);
  const { withEmbeddedStack } = await import('./embedded.js');
  return withEmbeddedStack(config, (_client: Client) => fn(config));
}

function version(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

const OVERLAP_HELP = 'skip|buffer_one|buffer_all|cancel_other|terminate_other|allow_all (default skip)';

/**
 * The command tree. Each action checks its input with its zod schema (options.ts) and hands a
 * `Run` to `execute`, which loads the config and runs it; commands load their heavy modules
 * (the worker, the SDK's native runtime) only when they run, so `--help` stays fast.
 */
export function buildProgram(execute: (run: Run) => Promise<void>): Command {
  const program = new Command('ragen-orchestrator')
    .description('Durable agent-RL training experiments (RAGEN on Ray, KubeRay) as Temporal workflows')
    .version(version(), '-V, --version')
    .exitOverride()
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for usage)');
  // Subcommands made after this inherit exitOverride and the error output settings.

  program
    .command('run')
    .description('validate an experiment spec, start the workflow and follow it')
    .argument('<spec.yaml>', 'experiment spec')
    .option('--embedded', 'own Temporal dev server (unless one answers) and a worker in this process')
    .action(async (spec: string, opts: object) => {
      const o = parseCommand('run', S.run, { spec, ...opts });
      const { prepareRun, runCommand } = await import('./run.js');
      // Bad input is refused here, before a server, a worker or a cluster starts.
      const input = await prepareRun(o.spec);
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

  const sweep = program
    .command('sweep')
    .description('validate a sweep (and every child spec), start it, show progress, print the ranked table')
    .argument('<sweep.yaml>', 'sweep spec')
    .option('--embedded', 'own Temporal dev server (unless one answers) and a worker in this process')
    .action(async (spec: string, opts: object) => {
      const o = parseCommand('sweep', S.sweep, { spec, ...opts });
      const { prepareSweep, sweepCommand } = await import('./sweep.js');
      const input = await prepareSweep(o.spec); // every child's spec is checked before anything starts
      await execute((config) => maybeEmbedded(o.embedded, config, (c) => sweepCommand(c, input)));
    });
  sweep
    .command('set')
    .description("change a running sweep's concurrency and/or failure budget (an Update; a refusal says why)")
    .argument('<sweep-id>')
    .option('--concurrency <n>', 'children running at once from now on')
    .option('--failure-budget <k>', 'failed children after which no new child starts')
    .action(async (workflowId: string, opts: object) => {
      const o = parseCommand('sweep set', S.sweepSet, { workflowId, ...opts });
      const { sweepSetCommand } = await import('./sweep.js');
      await execute((config) => sweepSetCommand(config, o.workflowId, o));
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
    .option('--running', 'only those still running')
    .option('--limit <n>', 'newest n (default 50)')
    .action(async (opts: object) => {
      const { limit, ...filters } = parseCommand('list', S.list, opts);
      const { listCommand } = await import('./list.js');
      await execute((config) => listCommand(config, filters, limit));
    });

  const schedule = program.command('schedule').description('Temporal Schedules for sweeps and experiments');
  schedule
    .command('create')
    .description('a schedule for a sweep or experiment spec (validated and embedded now)')
    .argument('<schedule-id>')
    .argument('<spec.yaml>')
    .option('--cron <expr>', "cron expression, e.g. '0 2 * * *' or @daily")
    .option('--every <duration>', 'interval, e.g. 30m, 6h, 1d')
    .option('--overlap <policy>', OVERLAP_HELP)
    .option('--catchup <duration>', 'catch-up window after an outage (default 1m)')
    .option('--no-pause-on-failure', 'keep the schedule active after a failed run')
    .action(async (scheduleId: string, spec: string, opts: object) => {
      const o = parseCommand('schedule create', S.scheduleCreate, { scheduleId, spec, ...opts });
      const { prepareScheduleCreate, scheduleCreateCommand } = await import('./schedule.js');
      // Flags and spec are checked before any connection: bad input exits 2 with the field and the fix.
      const prepared = await prepareScheduleCreate(o.scheduleId, o.spec, {
        cron: o.cron,
        every: o.every,
        overlap: o.overlap,
        catchupWindow: o.catchup,
        pauseOnFailure: o.pauseOnFailure,
      });
      await execute((config) => scheduleCreateCommand(config, prepared));
    });
  schedule
    .command('list')
    .description('every schedule: kind, name, timing, paused or active, next run')
    .action(async () => {
      const { scheduleCommand } = await import('./schedule.js');
      await execute((config) => scheduleCommand(config, 'list', undefined, {}));
    });
  for (const [verb, description] of [
    ['describe', 'policies, actions taken and skipped, running and recent runs'],
    ['delete', 'delete the schedule (workflows it started keep running)'],
    ['trigger', 'start a run now, under the overlap policy'],
  ] as const) {
    schedule
      .command(verb)
      .description(description)
      .argument('<schedule-id>')
      .action(async (scheduleId: string) => {
        const o = parseCommand(`schedule ${verb}`, S.scheduleId, { scheduleId });
        const { scheduleCommand } = await import('./schedule.js');
        await execute((config) => scheduleCommand(config, verb, o.scheduleId, {}));
      });
  }
  for (const verb of ['pause', 'unpause'] as const) {
    schedule
      .command(verb)
      .description(`${verb} the schedule`)
      .argument('<schedule-id>')
      .option('--note <text>', 'why (shown by describe)')
      .action(async (scheduleId: string, opts: object) => {
        const o = parseCommand(`schedule ${verb}`, S.scheduleNote, { scheduleId, ...opts });
        const { scheduleCommand } = await import('./schedule.js');
        await execute((config) => scheduleCommand(config, verb, o.scheduleId, { note: o.note }));
      });
  }

  program
    .command('reaper')
    .description('the teardown backstop')
    .command('install')
    .description("install or update the reaper's Temporal Schedule (overlap skip, 1 min catch-up)")
    .addOption(new Option('--every <seconds>', 'seconds between passes').default('300'))
    .addOption(new Option('--grace <seconds>', 'seconds a cluster of a closed owner is kept').default('120'))
    .action(async (opts: object) => {
      const o = parseCommand('reaper install', S.reaperInstall, opts);
      const { reaperInstallCommand } = await import('./manage.js');
      await execute((config) => reaperInstallCommand(config, o.every, o.grace));
    });

  program
    .command('dev')
    .description('Temporal dev server (persistent db), a worker and the reaper schedule until Ctrl-C')
    .action(async (opts: object) => {
      parseCommand('dev', S.none, opts);
      const { devCommand } = await import('./embedded.js');
      await execute(devCommand);
    });

  const campaign = program
    .command('campaign')
    .description('resumable training: start a campaign, or control a running one')
    .argument('<spec.yaml>', 'experiment spec with a campaign: section')
    .option('--embedded', 'own Temporal dev server (unless one answers) and a worker in this process')
    .action(async (spec: string, opts: object) => {
      const o = parseCommand('campaign', S.campaign, { spec, ...opts });
      const { prepareCampaign, campaignCommand } = await import('./campaign.js');
      const input = await prepareCampaign(o.spec);
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

  return program;
}
