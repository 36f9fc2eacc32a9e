import { readFile, readdir } from 'node:fs/promises';

/**
 * Every process of a local cluster carries `RAGEN_ORCH_CLUSTER=<name>` in its environment: `ray
 * start` gets it, and raylets, workers, the job supervisor and the job's driver inherit it. Scanning
 * /proc for it finds them all, whatever process group or session they moved to.
 */
export const CLUSTER_ENV_MARKER = 'RAGEN_ORCH_CLUSTER';

async function processIsZombie(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true; // gone between listing and reading
  }
}

/** Live (non-zombie) pids whose environment names this cluster. */
export async function clusterProcesses(clusterName: string): Promise<number[]> {
  const needle = Buffer.from(`\0${CLUSTER_ENV_MARKER}=${clusterName}\0`);
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = Buffer.concat([Buffer.from([0]), await readFile(`/proc/${pid}/environ`)]);
    } catch {
      continue;
    }
    if (environ.includes(needle) && !(await processIsZombie(pid))) pids.push(pid);
  }
  return pids;
}

export function signalProcessGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

export function signalPids(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
