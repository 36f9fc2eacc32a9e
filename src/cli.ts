import { DefaultLogger, type LogLevel, Runtime } from '@temporalio/worker';
import { loadConfig } from './config.js';
import { campaignCommand, campaignControlCommand, prepareCampaign } from './cli/campaign.js';
import { devCommand, withEmbeddedStack } from './cli/embedded.js';
import { cancelCommand, reaperInstallCommand, statusCommand } from './cli/manage.js';
import { prepareRun, runCommand } from './cli/run.js';
import { type ScheduleVerb, scheduleCommand } from './cli/schedule.js';
import { prepareSweep, sweepCommand } from './cli/sweep.js';
import { SpecError } from './spec/spec-error.js';

const USAGE = `usage: ragen-orchestrator <command>
  run [--embedded] <spec.yaml>   start an experiment and follow it (--embedded: own dev server + worker)
  status <workflow id>           show a workflow's state and live status
  cancel <workflow id>           cancel gracefully (teardown always runs)
  sweep [--embedded] <sweep.yaml>   start a sweep, show progress (running, done, failed, best), print the ranked table
  schedule create <id> <spec.yaml> (--cron EXPR | --every DUR) [--overlap skip|buffer_one|buffer_all|cancel_other|terminate_other|allow_all]
                  [--catchup DUR] [--no-pause-on-failure]   a Temporal Schedule for a sweep or an experiment spec
  schedule list | describe <id> | pause <id> [--note T] | unpause <id> | delete <id> | trigger <id>
  reaper install [--every S] [--grace S]   schedule the teardown backstop (default every 300 s, grace 120 s)
  dev                            Temporal dev server (persistent db), a worker and the reaper schedule
  campaign [--embedded] <spec.yaml>            start a resumable campaign and follow it
  campaign pause|resume|cancel|status <id>     control or inspect a running campaign
  campaign extend <id> <steps>                 add training steps to a running campaign`;

const SCHEDULE_VERBS: ScheduleVerb[] = ['create', 'list', 'describe', 'pause', 'unpause', 'delete', 'trigger'];

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // The CLI shows its own status lines; the SDK's INFO chatter would bury them.
  Runtime.install({ logger: new DefaultLogger((process.env['RAGEN_LOG_LEVEL'] as LogLevel | undefined) ?? 'WARN') });
  const config = loadConfig();
  switch (command) {
    case 'run': {
      const embedded = rest.includes('--embedded');
      const specPath = rest.find((a) => !a.startsWith('--'));
      if (!specPath) break;
      // Bad input is refused here, before a server, a worker or a cluster starts.
      const input = await prepareRun(specPath);
      return embedded ? withEmbeddedStack(config, () => runCommand(config, input)) : runCommand(config, input);
    }
    case 'sweep': {
      const embedded = rest.includes('--embedded');
      const specPath = rest.find((a) => !a.startsWith('--'));
      if (!specPath) break;
      const input = await prepareSweep(specPath); // every child's spec is checked before anything starts
      return embedded ? withEmbeddedStack(config, () => sweepCommand(config, input)) : sweepCommand(config, input);
    }
    case 'schedule': {
      const [verb, id, specPath] = rest.filter((a, i) => !a.startsWith('--') && !(rest[i - 1] ?? '').match(/^--(cron|every|overlap|catchup|note)$/));
      if (!verb || !SCHEDULE_VERBS.includes(verb as ScheduleVerb)) break;
      const request = {
        cron: flag(rest, '--cron'),
        every: flag(rest, '--every'),
        overlap: flag(rest, '--overlap'),
        catchupWindow: flag(rest, '--catchup'),
        pauseOnFailure: !rest.includes('--no-pause-on-failure'),
      };
      return scheduleCommand(config, verb as ScheduleVerb, id, { specPath, request, note: flag(rest, '--note') });
    }
    case 'status':
      if (rest[0]) return statusCommand(config, rest[0]);
      break;
    case 'cancel':
      if (rest[0]) return cancelCommand(config, rest[0]);
      break;
    case 'reaper':
      if (rest[0] === 'install') return reaperInstallCommand(config, Number(flag(rest, '--every') ?? 300), Number(flag(rest, '--grace') ?? 120));
      break;
    case 'dev':
      return devCommand(config);
    case 'campaign': {
      const [action, id, steps] = rest;
      if (action && id && ['pause', 'resume', 'extend', 'cancel', 'status'].includes(action)) return campaignControlCommand(config, action, id, steps);
      const specPath = rest.find((a) => !a.startsWith('--'));
      if (!specPath) break;
      const input = await prepareCampaign(specPath);
      return rest.includes('--embedded') ? withEmbeddedStack(config, () => campaignCommand(config, input)) : campaignCommand(config, input);
    }
  }
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof SpecError ? err.message : err);
    process.exit(err instanceof SpecError ? 2 : 1);
  },
);
