import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { type ObjectStore, ObjectStoreSchema } from '../../domain/object-store/object-store.js';

/**
 * Where a run's checkpoints were copied, next to its ledger (`object-store.json`): the store's
 * settings (no credentials) and, per step, the key prefix of its folder. A campaign reads it to
 * fetch a checkpoint its volume no longer holds.
 */
export const ObjectStoreIndexSchema = z.strictObject({
  store: ObjectStoreSchema,
  checkpoints: z.array(z.strictObject({ step: z.number(), sha256: z.string(), keyPrefix: z.string() })),
});
export type ObjectStoreIndex = z.infer<typeof ObjectStoreIndexSchema>;

export function objectStoreIndexPath(ledgerPath: string): string {
  return join(dirname(ledgerPath), 'object-store.json');
}

export async function readObjectStoreIndex(ledgerPath: string): Promise<ObjectStoreIndex | undefined> {
  let text: string;
  try {
    text = await readFile(objectStoreIndexPath(ledgerPath), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = ObjectStoreIndexSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : undefined;
}

/** Merge this run's uploads into the ledger's index (a campaign's attempts add to one index). */
export async function recordIndex(
  ledgerPath: string,
  settings: ObjectStore,
  added: ObjectStoreIndex['checkpoints'],
): Promise<void> {
  const before = await readObjectStoreIndex(ledgerPath);
  const steps = new Map((before?.checkpoints ?? []).map((c) => [c.step, c]));
  for (const c of added) steps.set(c.step, c);
  const index: ObjectStoreIndex = {
    store: settings,
    checkpoints: [...steps.values()].sort((a, b) => a.step - b.step),
  };
  const path = objectStoreIndexPath(ledgerPath);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(index, null, 2)}\n`);
  await rename(tmp, path);
}
