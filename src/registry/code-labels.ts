import type { ImageConfig } from './client.js';

/**
 * Image labels that say which code an image trains with. `org.opencontainers.image.revision` and
 * `…source` are the OCI annotation keys (image-spec annotations.md) for the commit and repository
 * the image was built from; RAGEN and verl have no label of their own, so the product names two
 * (see examples/ragen-image.Dockerfile) for images that build RAGEN with its verl submodule.
 */
export const CODE_LABELS = {
  revision: 'org.opencontainers.image.revision',
  source: 'org.opencontainers.image.source',
  ragenCommit: 'ai.ragen.commit',
  verlCommit: 'io.verl.commit',
} as const;

export interface ImageCode {
  /** Commit of the code the image was built from (OCI revision label). */
  revision?: string;
  /** Repository it was built from (OCI source label). */
  source?: string;
  ragenCommit?: string;
  verlCommit?: string;
  /** The image's WORKDIR: where `python train.py` runs on kuberay. */
  workingDir?: string;
}

export function imageCode(config: ImageConfig): ImageCode {
  const code: ImageCode = {};
  for (const [field, label] of Object.entries(CODE_LABELS) as [keyof typeof CODE_LABELS, string][]) {
    const value = config.labels[label]?.trim();
    if (value) code[field] = value;
  }
  if (config.workingDir) code.workingDir = config.workingDir;
  return code;
}
