import { type Command, Option } from 'commander';
import { CommandSchemas as S, parseCommand } from './options.js';
import type { Execute } from './command-run.js';

/** reaper and dev: the platform side (the orphan-cluster reaper, the local dev stack). */
export function addOperationsCommands(program: Command, execute: Execute): void {
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
}
