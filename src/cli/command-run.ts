import type { Client } from '@temporalio/client';
import type { OrchestratorConfig } from '../config/config.js';

/** What a command returns: the process's exit code. */
export type Run = (config: OrchestratorConfig) => Promise<number>;
/** Loads the config and runs a command (exit code, errors printed as user errors). */
export type Execute = (run: Run) => Promise<void>;

/** Run on the embedded stack (own dev server unless one answers, worker in this process) or not. */
export async function maybeEmbedded(
  embedded: boolean,
  config: OrchestratorConfig,
  fn: (c: OrchestratorConfig) => Promise<number>,
) {
  if (!embedded) return fn(config);
  const { withEmbeddedStack } = await import('./embedded.js');
  return withEmbeddedStack(config, (_client: Client) => fn(config));
}
