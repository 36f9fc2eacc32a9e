import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ClusterOwnerSchema } from '../../domain/cluster.js';

/** What the local backend records about a cluster it started: one state file per cluster dir. */
export const LocalNodeSchema = z.strictObject({
  role: z.enum(['head', 'worker']),
  group: z.string(),
  index: z.number().int(),
  /** `ray start --block` runs detached as its own session leader: pid = process group id. */
  pid: z.number().int(),
  gpus: z.number(),
  cpus: z.number(),
});

export const LocalClusterStateSchema = z.strictObject({
  name: z.string(),
  owner: ClusterOwnerSchema,
  createdAt: z.string(),
  nodeIp: z.string(),
  gcsPort: z.number().int(),
  dashboardUrl: z.string(),
  tempDir: z.string(),
  /** false until every node process was started; a retried create rebuilds an incomplete one. */
  complete: z.boolean(),
  nodes: z.array(LocalNodeSchema),
});
export type LocalClusterState = z.infer<typeof LocalClusterStateSchema>;
export type LocalNode = z.infer<typeof LocalNodeSchema>;

export const STATE_FILE = 'cluster.json';

export function clusterDir(runRoot: string, name: string): string {
  return join(runRoot, name);
}

export async function readState(dir: string): Promise<LocalClusterState | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, STATE_FILE), 'utf8');
  } catch {
    return undefined;
  }
  return LocalClusterStateSchema.parse(JSON.parse(text));
}

/** Write then rename, so a crash never leaves half a state file. */
export async function writeState(dir: string, state: LocalClusterState): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${STATE_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, JSON.stringify(state, null, 2));
  await rename(tmp, join(dir, STATE_FILE));
}
