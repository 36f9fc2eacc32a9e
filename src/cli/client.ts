import { Client, Connection } from '@temporalio/client';
import type { OrchestratorConfig } from '../config.js';

/** A Temporal client for one CLI command; the connection is closed when the command is done. */
export async function withClient<T>(config: OrchestratorConfig, fn: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  try {
    return await fn(new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }));
  } finally {
    await connection.close();
  }
}
