import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { logTail } from '../../src/domain/train/log-tail.js';
import { freePorts } from '../../src/backends/local/ports.js';
import { REPO_ROOT } from '../../src/config/config.js';
import { registerSearchAttributes, temporalReachable } from '../../src/cli/dev-server.js';
import { temporalServerVersions } from './temporal-versions.js';

/**
 * The production topology's server, for real: Temporal server v1.32.2 (built from the Go module
 * proxy by scripts/temporal/build.sh) on Debian's PostgreSQL, started with the config the
 * repository keeps (deploy/temporal/config/production-postgres12.yaml, as docker-compose.yml).
 * No UI: github.com/temporalio/ui-server/v2 is on the Go module proxy (assets embedded), but some
 * of its dependencies are not (403 for labstack/echo v4.16.1 and go.temporal.io/api v1.64.0 at v2.58.1).
 */
export interface PostgresTemporal {
  address: string;
  namespace: string;
  /** Everything the server and PostgreSQL log, for failure messages. */
  logDir: string;
  /** Stops the server and PostgreSQL and starts both again on the same data and ports. */
  restart(): Promise<{ downMs: number }>;
  /** Stops both and deletes the data directory. */
  stop(): Promise<void>;
}

const run = promisify(execFile);
const PG_USER = 'temporal';
const SERVER_ROOT = join(REPO_ROOT, 'deploy/temporal');

/** The server module in the Go module cache: the schemas ship in it. */
async function serverModuleDir(version: string): Promise<string> {
  const env = { ...process.env, PATH: `/usr/local/go/bin:${process.env.PATH}`, GOTOOLCHAIN: 'local' };
  const { stdout } = await run('go', ['env', 'GOMODCACHE'], { env });
  const dir = join(stdout.trim(), `go.temporal.io/server@${version}`);
  if (!existsSync(join(dir, 'schema/postgresql/v12')))
    throw new Error(
      `the Temporal server module is not in the Go module cache (${dir}): run scripts/temporal/build.sh`,
    );
  return dir;
}

/** initdb and postgres refuse to run as root: as root they run as Debian's `postgres` user. */
async function postgresIdentity(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', 'postgres']),
    run('id', ['-g', 'postgres']),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/** Kills a child: the signal, a grace period, then SIGKILL (a server without its database may linger). */
async function stopChild(child: ChildProcess, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await Promise.race([exited, sleep(graceMs)]);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** The last lines of a log file, for an error message (the log's folder is deleted after a failed start). */
async function fileTail(file: string): Promise<string> {
  return logTail((await readFile(file, 'utf8').catch(() => '')).trimEnd(), 15);
}

async function spawnLogged(
  cmd: string,
  args: string[],
  logFile: string,
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; uid?: number; gid?: number },
): Promise<ChildProcess> {
  const log = await open(logFile, 'a');
  const child = spawn(cmd, args, { ...opts, stdio: ['ignore', log.fd, log.fd] });
  await log.close();
  return child;
}

export async function startPostgresTemporal(opts: { namespace?: string } = {}): Promise<PostgresTemporal> {
  const namespace = opts.namespace ?? 'default';
  const versions = temporalServerVersions();
  const serverBin = join(versions.binDir, 'temporal-server');
  const sqlTool = join(versions.binDir, 'temporal-sql-tool');
  if (!existsSync(serverBin) || !existsSync(sqlTool))
    throw new Error(
      `the Temporal binaries are not built in ${versions.binDir}: run scripts/temporal/build.sh`,
    );
  const pgBin = `/usr/lib/postgresql/${versions.postgresMajor}/bin`;
  if (!existsSync(join(pgBin, 'postgres')))
    throw new Error(
      `PostgreSQL ${versions.postgresMajor} is not installed (${pgBin}): apt-get install postgresql`,
    );
  const moduleDir = await serverModuleDir(versions.server);

  const dir = await mkdtemp(join(tmpdir(), 'ragen-temporal-pg-'));
  const data = join(dir, 'pgdata');
  const logDir = join(dir, 'logs');
  await mkdir(logDir);
  await mkdir(data);
  const identity = await postgresIdentity();
  if (identity.uid !== undefined) await chown(dir, identity.uid, identity.gid ?? identity.uid);
  if (identity.uid !== undefined) await chown(data, identity.uid, identity.gid ?? identity.uid);
  await run(join(pgBin, 'initdb'), ['-D', data, '-U', PG_USER, '-A', 'trust', '--no-sync'], {
    ...identity,
    cwd: dir,
  });

  // Below 32768: Temporal's PostgreSQL schema keeps a membership port as SMALLINT
  // (cluster_membership.rpc_port); a port from the ephemeral range stops the server at start.
  const [pgPort, ...ports] = await freePorts(10, { below: 32_768 });
  const serverEnv = {
    ...process.env,
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(pgPort),
    POSTGRES_USER: PG_USER,
    POSTGRES_PWD: PG_USER,
    BIND_ON_IP: '127.0.0.1',
    ...Object.fromEntries(
      [
        'FRONTEND_GRPC_PORT',
        'FRONTEND_MEMBERSHIP_PORT',
        'FRONTEND_HTTP_PORT',
        'MATCHING_GRPC_PORT',
        'MATCHING_MEMBERSHIP_PORT',
        'HISTORY_GRPC_PORT',
        'HISTORY_MEMBERSHIP_PORT',
        'WORKER_GRPC_PORT',
        'WORKER_MEMBERSHIP_PORT',
      ].map((name, i) => [name, String(ports[i])]),
    ),
  };
  const address = `127.0.0.1:${ports[0]}`;
  let postgres: ChildProcess | undefined;
  let server: ChildProcess | undefined;

  const startPostgres = async () => {
    postgres = await spawnLogged(
      join(pgBin, 'postgres'),
      ['-D', data, '-p', String(pgPort), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
      join(logDir, 'postgres.log'),
      { ...identity, cwd: dir },
    );
    for (let i = 0; ; i++) {
      try {
        await run(join(pgBin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(pgPort), '-U', PG_USER]);
        return;
      } catch {
        if (postgres.exitCode !== null || i > 150)
          throw new Error(`PostgreSQL did not start:\n${await fileTail(join(logDir, 'postgres.log'))}`);
        await sleep(200);
      }
    }
  };
  const startServer = async () => {
    server = await spawnLogged(
      serverBin,
      [
        '--root',
        SERVER_ROOT,
        '--config',
        'config',
        '--env',
        'production-postgres12',
        '--allow-no-auth',
        'start',
      ],
      join(logDir, 'temporal-server.log'),
      { cwd: SERVER_ROOT, env: serverEnv },
    );
    const deadline = Date.now() + 90_000;
    while (!(await temporalReachable(address))) {
      if (server.exitCode !== null)
        throw new Error(
          `temporal-server exited with ${server.exitCode}:\n${await fileTail(join(logDir, 'temporal-server.log'))}`,
        );
      if (Date.now() > deadline)
        throw new Error(`temporal-server did not answer on ${address} within 90 s; see ${logDir}`);
      await sleep(300);
    }
  };
  const stopBoth = async () => {
    if (server) await stopChild(server, 'SIGTERM', 15_000);
    // SIGINT: PostgreSQL's fast shutdown (disconnects clients, checkpoints, exits).
    if (postgres) await stopChild(postgres, 'SIGINT', 15_000);
  };

  try {
    await startPostgres();
    // The same script docker-compose.yml's temporal-schema service runs.
    await run(join(SERVER_ROOT, 'setup-schema.sh'), [], {
      env: {
        ...process.env,
        TEMPORAL_SQL_TOOL: sqlTool,
        TEMPORAL_SCHEMA_DIR: join(moduleDir, 'schema/postgresql/v12'),
        SQL_PLUGIN: 'postgres12',
        SQL_HOST: '127.0.0.1',
        SQL_PORT: String(pgPort),
        SQL_USER: PG_USER,
        SQL_PASSWORD: PG_USER,
      },
    });
    await startServer();
    await registerNamespace(address, namespace);
  } catch (err) {
    await stopBoth();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    address,
    namespace,
    logDir,
    restart: async () => {
      const down = Date.now();
      await stopBoth();
      await startPostgres();
      await startServer();
      return { downMs: Date.now() - down };
    },
    stop: async () => {
      await stopBoth();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The namespace and the project's search attributes, retried until the new namespace is served. */
async function registerNamespace(address: string, namespace: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    await connection.workflowService
      .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') })
      .catch((err: unknown) => {
        if (!/already exists/i.test(String(err))) throw err;
      });
  } finally {
    await connection.close();
  }
  for (let i = 0; ; i++) {
    try {
      await registerSearchAttributes({ address }, namespace);
      return;
    } catch (err) {
      // The frontend's namespace cache learns the new namespace within seconds.
      if (i > 60) throw err;
      await sleep(500);
    }
  }
}
