import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from '../../src/config/config.js';

/** The real CLI as a process, as a user runs it (through the package's bin launcher). */
export function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'ragen-orchestrator.js'), ...args], {
      cwd: REPO_ROOT,
      // RAGEN_DEBUG off: the user's view. A fresh TEMPORAL_* set: nothing from the caller's shell.
      env: {
        ...process.env,
        RAGEN_DEBUG: '',
        TEMPORAL_PROFILE: '',
        TEMPORAL_CONFIG_FILE: '/nonexistent',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** A loopback port nothing listens on: bound, read, closed. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
