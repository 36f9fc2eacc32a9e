import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { REPO_ROOT } from '../config/config.js';
import type { Execute } from './command-run.js';
import { addCampaignCommands } from './commands-campaign.js';
import { addExperimentCommands } from './commands-experiment.js';
import { addOperationsCommands } from './commands-operations.js';
import { addSweepCommands } from './commands-sweep.js';

export type { Run } from './command-run.js';

function version(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The command tree. Each action checks its input with its zod schema (options.ts) and hands a
 * `Run` to `execute`, which loads the config and runs it; commands load their heavy modules
 * (the worker, the SDK's native runtime) only when they run, so `--help` stays fast.
 */
export function buildProgram(execute: Execute): Command {
  const program = new Command('ragen-orchestrator')
    .description('Durable agent-RL training experiments (RAGEN on Ray, KubeRay) as Temporal workflows')
    .version(version(), '-V, --version')
    .exitOverride()
    .showSuggestionAfterError(true)
    .showHelpAfterError('(add --help for usage)');
  // Subcommands made after this inherit exitOverride and the error output settings.

  addExperimentCommands(program, execute);
  addSweepCommands(program, execute);
  addCampaignCommands(program, execute);
  addOperationsCommands(program, execute);
  return program;
}
