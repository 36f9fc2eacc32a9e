import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A small Hugging Face model directory (config, tokenizer files, a weights index and its two shards):
 * what the environment probe reads, the trainer's model_path points at, and the stand-in hub serves.
 */
export async function writeModelDir(dir: string): Promise<{ dir: string; files: Record<string, Buffer> }> {
  const shards = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
  const files: Record<string, Buffer> = {
    'config.json': Buffer.from(JSON.stringify({ model_type: 'qwen2', hidden_size: 8, num_hidden_layers: 1 })),
    'tokenizer_config.json': Buffer.from(JSON.stringify({ model_max_length: 32 })),
    'tokenizer.json': Buffer.from(
      JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab: { a: 0 } } }),
    ),
    'model.safetensors.index.json': Buffer.from(
      JSON.stringify({
        metadata: { total_size: 128 },
        weight_map: { 'embed.weight': shards[0], 'lm_head.weight': shards[1] },
      }),
    ),
    [shards[0]!]: Buffer.alloc(64, 0),
    [shards[1]!]: Buffer.alloc(64, 1),
  };
  await mkdir(dir, { recursive: true });
  for (const [name, body] of Object.entries(files)) await writeFile(join(dir, name), body);
  return { dir, files };
}

/** The probe's fingerprint, computed independently: sha256 over `<name> <sha256>` lines of config.json and the index. */
export function expectedFingerprint(files: Record<string, Buffer>): string {
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const lines = ['config.json', 'model.safetensors.index.json'].map((n) => `${n} ${sha(files[n]!)}`);
  return `sha256:${sha(Buffer.from(lines.join('\n')))}`;
}
