import { randomBytes } from 'node:crypto';
import { open, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { permanent } from '../../errors/domain-error.js';

/**
 * Ray token authentication for local clusters: one random token per cluster, in a file only its
 * owner can read, in the cluster's directory. Ray's processes find it through RAY_AUTH_TOKEN_PATH
 * (so it is never in a command line or an environment listing); the backend reads it when an
 * activity talks to the dashboard, so it never travels in a handle, a manifest or history.
 */
export const AUTH_TOKEN_FILE = 'ray-auth-token';

export function authTokenPath(clusterDir: string): string {
  return join(clusterDir, AUTH_TOKEN_FILE);
}

/** A fresh 256-bit token (as Ray's own generator makes), written 0600 then renamed into place. */
export async function writeNewAuthToken(clusterDir: string): Promise<string> {
  const token = randomBytes(32).toString('hex');
  const path = authTokenPath(clusterDir);
  const tmp = `${path}.${process.pid}.tmp`;
  // Created with mode 0600: the token is never readable by others, not even for an instant.
  const file = await open(tmp, 'w', 0o600);
  try {
    await file.chmod(0o600); // the mode of open() is masked by umask only downwards; be explicit
    await file.writeFile(token);
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  return token;
}

/**
 * The cluster's token; undefined when the file does not exist (a cluster started before auth, or
 * gone). A file others may read or write is refused: the token could be known or replaced.
 */
export async function readAuthToken(clusterDir: string): Promise<string | undefined> {
  const path = authTokenPath(clusterDir);
  let mode: number;
  let uid: number;
  try {
    ({ mode, uid } = await stat(path));
  } catch {
    return undefined;
  }
  if ((mode & 0o077) !== 0 || (process.getuid && uid !== process.getuid()))
    throw permanent(
      ErrorTypes.StateFileInvalid,
      `Ray auth token file ${path} is readable or writable by others (mode ${(mode & 0o777).toString(8)}, owner uid ${uid}): not used; delete the cluster and create it again`,
    );
  const token = (await readFile(path, 'utf8')).trim();
  if (!/^[0-9a-f]{64}$/.test(token))
    throw permanent(
      ErrorTypes.StateFileInvalid,
      `Ray auth token file ${path} does not hold a token this product wrote: not used; delete the cluster and create it again`,
    );
  return token;
}

/**
 * The environment `ray start` needs for token mode. RAY_AUTH_TOKEN is cleared: Ray prefers it to
 * the file, and one inherited from the worker's environment would not be this cluster's token.
 */
export function rayAuthEnv(clusterDir: string): Record<string, string | undefined> {
  return {
    RAY_AUTH_MODE: 'token',
    RAY_AUTH_TOKEN_PATH: authTokenPath(clusterDir),
    RAY_AUTH_TOKEN: undefined,
  };
}
