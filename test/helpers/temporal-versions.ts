import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../src/config/config.js';

/** scripts/temporal/versions.sh: the one place the production-topology versions are written. */
export const TEMPORAL_VERSIONS_FILE = join(REPO_ROOT, 'scripts/temporal/versions.sh');

/**
 * The `NAME="${NAME:-value}"` and `NAME="value"` assignments of a versions file, defaults taken,
 * so the tests read the same values the build script does.
 */
export function readShellVersions(file: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)="(?:\$\{\1:-([^}]*)\}|([^"$]*))"\s*$/.exec(line.trim());
    if (m?.[1]) values[m[1]] = m[2] ?? m[3] ?? '';
  }
  return values;
}

export interface TemporalServerVersions {
  /** go.temporal.io/server tag, `v1.32.2`. */
  server: string;
  /** Debian's PostgreSQL major version the tests run (`15`). */
  postgresMajor: string;
  /** Where scripts/temporal/build.sh puts temporal-server and temporal-sql-tool. */
  binDir: string;
}

export function temporalServerVersions(): TemporalServerVersions {
  const v = readShellVersions(TEMPORAL_VERSIONS_FILE);
  const server = v.TEMPORAL_SERVER_VERSION;
  const postgresMajor = v.POSTGRES_MAJOR;
  if (!server || !postgresMajor)
    throw new Error(`${TEMPORAL_VERSIONS_FILE} must set TEMPORAL_SERVER_VERSION and POSTGRES_MAJOR`);
  const cache = process.env.RAGEN_CACHE ?? join(homedir(), '.cache/ragen-orchestrator');
  return { server, postgresMajor, binDir: join(cache, 'temporal', `server-${server}`, 'bin') };
}
