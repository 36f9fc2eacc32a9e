import { readdir, readFile } from 'node:fs/promises';

/**
 * Pids of live Ray processes (raylet, gcs_server, workers) on this machine, for leak checks; with
 * `under`, only those whose command line names that path (a cluster's --temp-dir, the run root).
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
      if (/raylet|gcs_server|default_worker\.py|ray start/.test(cmd))
        found.push(`${pid} ${cmd.slice(0, 120)}`);
    } catch {
      // exited while listing
    }
  }
  return found;
}
