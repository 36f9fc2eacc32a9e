import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, statfs, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clusterProcesses } from '../../src/backends/local/processes.js';
import { clusterDir, readState } from '../../src/backends/local/state.js';

/**
 * Faults injected into a local-backend cluster from outside, as a crashed host, an OOM killer or an
 * operator would: by pid, with signals, and a checkpoint volume that fills up. Shared by the fault
 * tests and bench/soak.ts.
 */

const run = promisify(execFile);

export interface LocalClusterView {
  name: string;
  createdAt: string;
  headPgid: number;
  workerPgids: number[];
}

/** The clusters in the run root whose owner workflow id starts with `prefix` (state files that parse). */
export async function clustersOwnedBy(runRoot: string, prefix: string): Promise<LocalClusterView[]> {
  const out: LocalClusterView[] = [];
  for (const name of await readdir(runRoot).catch(() => [] as string[])) {
    const state = await readState(clusterDir(runRoot, name)).catch(() => undefined); // half-written by a killed worker
    if (!state?.owner.workflowId.startsWith(prefix)) continue;
    const head = state.nodes.find((n) => n.role === 'head');
    if (!head) continue;
    out.push({
      name,
      createdAt: state.createdAt,
      headPgid: head.pid,
      workerPgids: state.nodes.filter((n) => n.role === 'worker').map((n) => n.pid),
    });
  }
  return out;
}

async function cmdline(pid: number): Promise<string> {
  return (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' ');
}

async function pgidOf(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[2] ? Number(fields[2]) : undefined;
}

/** The raylet of one node: the cluster's process whose command is the raylet binary, in that node's process group. */
export async function rayletOf(cluster: string, nodePgid: number): Promise<number | undefined> {
  for (const pid of await clusterProcesses(cluster)) {
    if (/\/raylet\/raylet /.test(await cmdline(pid)) && (await pgidOf(pid)) === nodePgid) return pid;
  }
  return undefined;
}

/** The trainer's driver: the Ray job's Python process that runs the entrypoint (not its /bin/sh wrapper). */
export async function trainerDrivers(cluster: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await clusterProcesses(cluster)) {
    const cmd = await cmdline(pid);
    if (cmd.includes('trainer.default_local_dir=') && !/^\/bin\/(ba)?sh /.test(cmd)) found.push(pid);
  }
  return found;
}

export function signal(pidOrNegativePgid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pidOrNegativePgid, sig);
    return true;
  } catch {
    return false; // already gone
  }
}

/** A tmpfs of `sizeMb` at `dir` (root only): a checkpoint volume that can be filled. */
export async function mountTmpfs(dir: string, sizeMb: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
}

export async function unmount(dir: string): Promise<void> {
  await run('umount', ['-l', dir]).catch(() => undefined);
}

/** Fills the volume at `dir` to the last byte with a filler file; returns the bytes written. */
export async function fillVolume(dir: string): Promise<number> {
  const s = await statfs(dir);
  const bytes = Number(s.bavail) * Number(s.bsize);
  const file = join(dir, '.soak-filler');
  // tmpfs supports fallocate; a plain write of the rest covers what fallocate's rounding leaves.
  await run('fallocate', ['-l', String(bytes), file]).catch(() => writeFile(file, Buffer.alloc(bytes)));
  const left = await statfs(dir);
  if (Number(left.bavail) > 0)
    await writeFile(
      join(dir, '.soak-filler-2'),
      Buffer.alloc(Number(left.bavail) * Number(left.bsize)),
    ).catch(() => undefined);
  return bytes;
}
