import { type Command, Option } from 'commander';
import { CommandSchemas as S, parseCommand } from './options.js';
import type { Execute } from './command-run.js';

/** reaper, nodes and dev: the platform side (the orphan-cluster reaper, the node ledger, the local dev stack). */
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

  const budgets = program
    .command('budgets')
    .description(
      'team GPU-hour budgets (budgets.yaml: team → gpuHours per day|week|month, policy queue|refuse)',
    );
  budgets
    .command('apply')
    .description("start or update each team's budget workflow (budget-<team>) from the file")
    .argument('<file>', 'budgets.yaml')
    .action(async (file: string) => {
      const o = parseCommand('budgets apply', S.budgetsApply, { file });
      const { budgetsApplyCommand } = await import('./budgets.js');
      await execute((config) => budgetsApplyCommand(config, o.file));
    });
  budgets
    .command('report')
    .description('budget, spend, reservations and queue per team, this period')
    .option('--team <team>', 'one team (else every team of the budgets file)')
    .option(
      '--file <file>',
      'the budgets file listing the teams (default RAGEN_BUDGETS_FILE, else budgets.yaml)',
    )
    .option('--format <format>', 'table|json', 'table')
    .action(async (opts: object) => {
      const o = parseCommand('budgets report', S.budgetsReport, opts);
      const { budgetsReportCommand } = await import('./budgets.js');
      await execute((config) => budgetsReportCommand(config, o));
    });

  const nodes = program
    .command('nodes')
    .description(
      'link-suspect nodes (the probe named them slow): every new cluster avoids them until they expire',
    )
    .addOption(
      new Option('--backend <backend>', 'whose ledger').choices(['local', 'kuberay']).default('local'),
    )
    .option('--json', 'print the entries as JSON')
    .action(async (opts: object) => {
      const o = parseCommand('nodes', S.nodes, opts);
      const { nodesListCommand } = await import('./nodes.js');
      await execute((config) => nodesListCommand(config, o.backend, o.json ?? false));
    });
  nodes
    .command('clear')
    .description('remove suspects from the ledger (a fixed or drained node), by name or --all')
    .argument('[node...]', 'node names as `nodes` lists them')
    .option('--all', 'clear every suspect')
    .action(async (names: string[], opts: { all?: boolean }, cmd: Command) => {
      // --backend is the parent's option: commander parses it there wherever it stands.
      const backend = (cmd.parent?.opts() as { backend?: string } | undefined)?.backend;
      const o = parseCommand('nodes clear', S.nodesClear, { backend, ...opts });
      const { nodesClearCommand } = await import('./nodes.js');
      await execute((config) => nodesClearCommand(config, o.backend, names, o.all ?? false));
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
