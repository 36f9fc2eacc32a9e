import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePorts } from '../../src/backends/local/ports.js';

/**
 * A real Distribution registry (Debian's docker-registry package, installed by scripts/setup.sh)
 * on loopback, with filesystem storage in a temp dir: without auth, with htpasswd (Basic), or with
 * token auth pointing at a token endpoint.
 */
export interface RunningRegistry {
  host: string;
  baseUrl: string;
  stop(): Promise<void>;
}

export type RegistryAuthMode =
  | { kind: 'none' }
  | { kind: 'htpasswd'; username: string; password: string }
  | { kind: 'token'; realm: string; service: string; issuer: string; rootCertBundle: string };

function authSection(auth: RegistryAuthMode, dir: string): string {
  if (auth.kind === 'htpasswd')
    return `auth:\n  htpasswd:\n    realm: test-registry\n    path: ${join(dir, 'htpasswd')}\n`;
  if (auth.kind === 'token') {
    return `auth:\n  token:\n    realm: ${auth.realm}\n    service: ${auth.service}\n    issuer: ${auth.issuer}\n    rootcertbundle: ${auth.rootCertBundle}\n`;
  }
  return '';
}

export async function startRegistry(auth: RegistryAuthMode = { kind: 'none' }): Promise<RunningRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'oci-registry-'));
  const [port] = (await freePorts(1)) as [number];
  if (auth.kind === 'htpasswd') {
    // bcrypt, the only hash the registry accepts; htpasswd comes from apache2-utils.
    await promisify(execFile)('htpasswd', ['-Bbc', join(dir, 'htpasswd'), auth.username, auth.password]);
  }
  const config = `version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\nhttp:\n  addr: 127.0.0.1:${port}\n${authSection(auth, dir)}`;
  await writeFile(join(dir, 'config.yml'), config);
  const child: ChildProcess = spawn('docker-registry', ['serve', join(dir, 'config.yml')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const host = `127.0.0.1:${port}`;
  const baseUrl = `http://${host}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited (${child.exitCode}): ${stderr}`);
    const ok = await fetch(`${baseUrl}/v2/`).then(
      (r) => [200, 401].includes(r.status),
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`docker-registry did not answer on ${host}: ${stderr}`);
    await sleep(100);
  }
  return {
    host,
    baseUrl,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
