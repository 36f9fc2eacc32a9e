import type { ImageConfig } from './client.js';

/**
 * The image label that states the Ray installed in the image. No label is conventional for this
 * (the rayproject images only carry the version in their tag), so the product names one; see
 * examples/ragen-image.Dockerfile.
 */
export const RAY_VERSION_LABEL = 'io.ray.version';

export interface ImageRayVersion {
  version?: string;
  source: 'label' | 'env' | 'none';
}

/** The label wins; `RAY_VERSION=` in the config's Env is the fallback; else none is stated. */
export function imageRayVersion(config: ImageConfig): ImageRayVersion {
  const label = config.labels[RAY_VERSION_LABEL]?.trim();
  if (label) return { version: label, source: 'label' };
  const env = config.env
    .find((e) => e.startsWith('RAY_VERSION='))
    ?.slice('RAY_VERSION='.length)
    .trim();
  if (env) return { version: env, source: 'env' };
  return { source: 'none' };
}
