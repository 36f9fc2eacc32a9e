import type { Command } from 'commander';
import { CommandSchemas as S, parseCommand } from './options.js';
import { type Execute, maybeEmbedded } from './command-run.js';
import { OWNER_HELP, TEAM_HELP } from './owner-help.js';

const OVERLAP_HELP = 'skip|buffer_one|buffer_all|cancel_other|terminate_other|allow_all (default skip)';

/** sweep (start, set) and schedule (create, list, ...): many experiments, and when they start. */
export function addSweepCommands(program: Command, execute: Execute): void {
  const sweep = program
    .command('sweep')
    .description('validate a sweep (and every child spec), start it, show progress, print the ranked table')
    .argument('<sweep.yaml>', 'sweep spec')
    .option('--embedded', 'own Temporal dev server (unless one answers) and a worker in this process')
    .option('--owner <user>', OWNER_HELP)
    .option('--team <team>', TEAM_HELP)
    .action(async (spec: string, opts: object) => {
      const o = parseCommand('sweep', S.sweep, { spec, ...opts });
      const { prepareSweep, sweepCommand } = await import('./sweep.js');
      const input = await prepareSweep(o.spec, o); // every child's spec is checked before anything starts
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
    .option('--owner <user>', OWNER_HELP)
    .option('--team <team>', TEAM_HELP)
    .action(async (scheduleId: string, spec: string, opts: object) => {
      const o = parseCommand('schedule create', S.scheduleCreate, { scheduleId, spec, ...opts });
      const { prepareScheduleCreate, scheduleCreateCommand } = await import('./schedule.js');
      // Flags and spec are checked before any connection: bad input exits 2 with the field and the fix.
      const prepared = await prepareScheduleCreate(
        o.scheduleId,
        o.spec,
        {
          cron: o.cron,
          every: o.every,
          overlap: o.overlap,
          catchupWindow: o.catchup,
          pauseOnFailure: o.pauseOnFailure,
        },
        o,
      );
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
}
