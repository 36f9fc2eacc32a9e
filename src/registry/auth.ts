import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the standard Docker config file is: $DOCKER_CONFIG/config.json, else ~/.docker/config.json. */
export function dockerConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env['DOCKER_CONFIG'] ?? join(homedir(), '.docker'), 'config.json');
}

export interface BasicCredentials {
  username: string;
  password: string;
  /** Where they came from, for error messages (never the secret itself). */
  source: string;
}

const DOCKER_HUB_KEYS = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

/** `https://host:port/v1/` and `host:port` name the same registry in `auths`. */
function registryOfAuthKey(key: string): string {
  const host = key.replace(/^[a-z]+:\/\//, '').split('/')[0] ?? '';
  return DOCKER_HUB_KEYS.has(host) ? 'docker.io' : host;
}

/**
 * Basic credentials for a registry from the Docker config's `auths` (`auth` = base64 of
 * user:password, or `username` and `password`). Credential helpers are not consulted.
 */
export async function basicCredentialsFor(
  registry: string,
  configPath: string,
): Promise<BasicCredentials | undefined> {
  let text: string;
  try {
    text = await readFile(configPath, 'utf8');
  } catch {
    return undefined; // no config file: anonymous only
  }
  let auths: Record<string, { auth?: string; username?: string; password?: string }>;
  try {
    auths = (JSON.parse(text) as { auths?: typeof auths }).auths ?? {};
  } catch {
    throw new Error(`the Docker config ${configPath} is not valid JSON; fix or remove it`);
  }
  const wanted = DOCKER_HUB_KEYS.has(registry) ? 'docker.io' : registry;
  for (const [key, entry] of Object.entries(auths)) {
    if (registryOfAuthKey(key) !== wanted) continue;
    const source = `basic auth from ${configPath} for ${key}`;
    if (entry.auth) {
      const decoded = Buffer.from(entry.auth, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon > 0) return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1), source };
    }
    if (entry.username && entry.password !== undefined)
      return { username: entry.username, password: entry.password, source };
  }
  return undefined;
}

export function basicHeader(c: BasicCredentials): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** Parse `WWW-Authenticate: Bearer realm="…",service="…",scope="…"` (quoted or token values). */
export function parseChallenge(header: string | null): Challenge | undefined {
  if (!header) return undefined;
  const m = /^\s*([A-Za-z]+)\s*(.*)$/.exec(header);
  if (!m?.[1]) return undefined;
  const params: Record<string, string> = {};
  for (const p of (m[2] ?? '').matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) {
    if (p[1]) params[p[1].toLowerCase()] = (p[2] ?? p[3] ?? '').replace(/\\(.)/g, '$1');
  }
  return { scheme: m[1].toLowerCase(), params };
}
