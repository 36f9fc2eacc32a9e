import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelSource } from '../domain/model/model.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/**
 * The model's revision for the provenance: a hub model's pinned commit, or for a directory the
 * fingerprint the environment probe computes too (sha256 over `<name> <sha256>` lines of
 * config.json and the weight index, probes/ragen_probes/environment_checks.py). undefined when
 * this process cannot read the directory (the probe records it from the nodes).
 */
export async function modelRevisionOf(model: ModelSource): Promise<string | undefined> {
  if (model.hub !== undefined) return `${model.hub}@${model.revision ?? ''}`;
  if (model.path === undefined) return undefined;
  const parts: string[] = [];
  for (const name of ['config.json', 'model.safetensors.index.json', 'pytorch_model.bin.index.json']) {
    const body = await readFile(join(model.path, name)).catch(() => undefined);
    if (body) parts.push(`${name} ${sha256(body)}`);
  }
  // Without an index the probe adds the single weight file's size: leave that case to the probe.
  if (parts.length < 2) return undefined;
  return `sha256:${sha256(parts.join('\n'))}`;
}
