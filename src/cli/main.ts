import { CommanderError } from 'commander';
import type { OrchestratorConfig } from '../config/config.js';
import { loadConfig } from '../config/config.js';
import { buildProgram } from './program.js';
import { type ConnectionContext, describeUserError } from '../config/user-errors.js';

/**
 * The `ragen-orchestrator` command line. Exit codes: 0 success, 1 a failure (a workflow that did not
 * succeed, a server that does not answer), 2 bad input (flags, specs, environment). Failures the
 * user can fix are one line naming the problem and the fix; RAGEN_DEBUG=1 adds the stack.
 */
async function main(argv: string[]): Promise<number> {
  let exitCode = 0;
  let connection: ConnectionContext | undefined;
  const program = buildProgram(async (run: (config: OrchestratorConfig) => Promise<number>) => {
    const config = loadConfig();
    connection = config.temporal;
    exitCode = await run(config);
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    // The parser has printed its own message (unknown flag, missing value, help, version).
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    const known = describeUserError(err, connection);
    if (process.env['RAGEN_DEBUG'] === '1') console.error(err);
    if (known) {
      console.error(known.message);
      return known.exitCode;
    }
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    console.error(
      `error: ${message}${process.env['RAGEN_DEBUG'] === '1' ? '' : ' (RAGEN_DEBUG=1 shows the stack)'}`,
    );
    return 1;
  }
}

process.exit(await main(process.argv.slice(2)));
