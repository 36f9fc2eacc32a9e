import { Client, Connection } from '@temporalio/client';
import type { OrchestratorConfig } from '../config/config.js';
import { UserError, unreachableMessage } from '../config/user-errors.js';
import { classifyStartFailure, credentialsRefusedMessage } from './start-failures.js';

/**
 * A Temporal client for one CLI command, connected with the `temporal` CLI's settings (profile file
 * and TEMPORAL_* variables); the connection is closed when the command is done.
 */
export async function withClient<T>(
  config: OrchestratorConfig,
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  let connection: Connection;
  try {
    connection = await Connection.connect(config.temporal.connectionOptions);
  } catch (err) {
    // A server that answers but refuses the credentials is not an unreachable one.
    const refused = classifyStartFailure(err);
    if (refused?.kind === 'permission-denied')
      throw new UserError(credentialsRefusedMessage(config.temporal, 'connect', refused.detail), 1, {
        cause: err,
      });
    throw new UserError(unreachableMessage(config.temporal), 1, { cause: err });
  }
  try {
    return await fn(new Client({ connection, namespace: config.temporal.namespace }));
  } finally {
    await connection.close();
  }
}
