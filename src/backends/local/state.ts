import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { z } from 'zod';
import { ClusterOwnerSchema } from '../../domain/cluster/cluster.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { permanent } from '../../errors/domain-error.js';
import { parseJsonText } from '../../domain/spec/json-text.js';

/** What the local backend records about a cluster it started: one state file per cluster dir. */
export const LocalNodeSchema = z.strictObject({
  role: z.enum(['head', 'worker']),
  group: z.string(),
  index: z.number().int(),
  /** `ray start --block` runs detached as its own session leader: pid = process group id (never 0 or 1: kill(-1) is every process). */
  pid: z.number().int().min(2),
  gpus: z.number(),
  cpus: z.number(),
  /** A worker's slot (slots.ts); absent on the head and in state files written before slots. */
  slot: z.number().int().min(0).optional(),
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

/**
 * The state file of the cluster dir, validated: undefined when there is none; a corrupt one, or one
 * that is not this dir's (another name, a temp dir outside the run root), is a StateFileInvalid
 * error naming the file. Nothing it names (pids, directories) may be acted on then.
 */
export async function readState(dir: string): Promise<LocalClusterState | undefined> {
  const path = join(dir, STATE_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  const refuse = (why: string) =>
    permanent(
      ErrorTypes.StateFileInvalid,
      `local cluster state file ${path} ${why}; it was left as it is and nothing it names (processes, directories) was touched: check for stray Ray processes (ps -ef | grep ray), then remove ${dir}`,
    );
  const parsed = parseJsonText(text, LocalClusterStateSchema, 'a cluster state');
  if (!parsed.ok) throw refuse(parsed.why);
  const state = parsed.data;
  if (state.name !== basename(dir)) throw refuse(`names cluster ${state.name}, not ${basename(dir)}`);
  const fromRoot = relative(dirname(dir), state.tempDir);
  if (!fromRoot || fromRoot.startsWith('..') || fromRoot.includes('/'))
    throw refuse(`names temp dir ${state.tempDir}, outside the run root ${dirname(dir)}`);
  return state;
}

/** Write then rename, so a crash never leaves half a state file. */
export async function writeState(dir: string, state: LocalClusterState): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${STATE_FILE}.${process.pid}.tmp`);
  await writeFile(tmp, JSON.stringify(state, null, 2));
  await rename(tmp, join(dir, STATE_FILE));
}
