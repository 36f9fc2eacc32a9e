import { Client, Connection } from '@temporalio/client';
import type { OrchestratorConfig } from '../config.js';
import { UserError, unreachableMessage } from '../user-errors.js';

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
    throw new UserError(unreachableMessage(config.temporal), 1, { cause: err });
  }
  try {
    return await fn(new Client({ connection, namespace: config.temporal.namespace }));
  } finally {
    await connection.close();
  }
}
