import { readdir, readFile } from 'node:fs/promises';

/**
 * scripts/test.sh runs the integration tests in two lanes at once (KubeRay's, the local backend's),
 * each under its own RAGEN_TEST_LANE; every process a test starts inherits it (the stand-in kubelet
 * passes it to its containers). A lane's leak check skips only the other lane's processes: one
 * without the marker still counts.
 */
const LANE = 'RAGEN_TEST_LANE';

async function inOtherLane(pid: string): Promise<boolean> {
  const lane = process.env[LANE];
  if (lane === undefined) return false;
  const environ = await readFile(`/proc/${pid}/environ`, 'utf8');
  const theirs = environ.split('\0').find((v) => v.startsWith(`${LANE}=`));
  return theirs !== undefined && theirs !== `${LANE}=${lane}`;
}

/**
 * Pids of live Ray processes (raylet, gcs_server, workers) on this machine (of this test lane), for
 * leak checks; with `under`, only those whose command line names that path (a cluster's --temp-dir,
 * the run root).
 */
export async function rayProcesses(under?: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replace(/\0/g, ' ');
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (under !== undefined && !cmd.includes(under)) continue;
      if (!/raylet|gcs_server|default_worker\.py|ray start/.test(cmd)) continue;
      if (await inOtherLane(pid)) continue;
      found.push(`${pid} ${cmd.slice(0, 120)}`);
    } catch {
      // exited while listing
    }
  }
  return found;
}
