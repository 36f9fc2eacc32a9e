import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { SpecError } from '../../domain/spec/spec-error.js';

/**
 * On the local backend the Ray cluster runs where the worker does, on this machine or one sharing
 * its disks, so a storage directory this machine cannot create and write is bad input: found at load
 * (exit 2), not minutes later in a worker's preflight. Each is created if absent, and a probe file
 * written and deleted. The kuberay backend's directories live on a PVC the CLI cannot see.
 */
export async function checkLocalStorageWritable(spec: ExperimentSpec, source: string): Promise<void> {
  if (spec.backend !== 'local') return;
  const issues: { field: string; message: string }[] = [];
  for (const key of ['checkpointDir', 'archiveDir'] as const) {
    const dir = spec.storage[key];
    const probe = join(dir, `.ragen-write-probe-${randomUUID().slice(0, 8)}`);
    try {
      await makeDirectory(dir);
      await writeFile(probe, 'probe\n');
      await rm(probe, { force: true });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      issues.push({
        field: `storage.${key}`,
        message: `'${dir}' cannot be created or written on this machine (${code}): choose a directory the user running the worker can write, or create it and grant write access`,
      });
    }
  }
  if (issues.length > 0) throw new SpecError(source, issues);
}

/**
 * mkdir -p, one level at a time: Node's `recursive: true` spins forever where the kernel answers
 * ENOENT for a directory whose parent exists (/proc), instead of failing.
 */
async function makeDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || dirname(dir) === dir) throw err;
    await makeDirectory(dirname(dir));
    await mkdir(dir).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}
