import { z } from 'zod';

/** `registry/repo@sha256:<64 hex>`, optionally `repo:tag@sha256:…` (the tag is kept only as a record). */
export const IMAGE_DIGEST_PATTERN =
  /^(?<repository>[a-z0-9][a-z0-9._\-/:]*?)(?::(?<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?@(?<digest>sha256:[a-f0-9]{64})$/;

export const ImageRefSchema = z.string().superRefine((value, ctx) => {
  if (IMAGE_DIGEST_PATTERN.test(value)) return;
  const fix = value.includes('@')
    ? 'the digest must be sha256: followed by 64 lowercase hex characters'
    : `pin the image by digest: run \`docker buildx imagetools inspect ${value}\` (or \`crane digest ${value}\`) and write ${value.split(':')[0] ?? value}@sha256:<digest>`;
  ctx.addIssue({ code: 'custom', message: `image '${value}' is not pinned by an immutable digest; ${fix}` });
});

export interface ImageRef {
  repository: string;
  tag?: string;
  digest: string;
}

export function parseImageRef(value: string): ImageRef {
  const groups = IMAGE_DIGEST_PATTERN.exec(value)?.groups;
  if (!groups?.['repository'] || !groups['digest']) throw new Error(`not a digest-pinned image: ${value}`);
  return { repository: groups['repository'], tag: groups['tag'], digest: groups['digest'] };
}

/** What the verify stage found out about the image; recorded in the manifest. */
export const ImageVerificationSchema = z.strictObject({
  ref: z.string().optional(),
  digest: z.string().optional(),
  /** The linux/amd64 manifest an index resolved to (equal to digest for a single-platform image). */
  platformManifestDigest: z.string().optional(),
  /** The Ray version the image states, and where it says so (label, Env, or nowhere). */
  rayVersion: z.string().optional(),
  rayVersionSource: z.enum(['label', 'env', 'none']).optional(),
  /** The code the image trains with, from its labels (src/registry/code-labels.ts), and its WORKDIR. */
  code: z
    .strictObject({
      revision: z.string().optional(),
      source: z.string().optional(),
      ragenCommit: z.string().optional(),
      verlCommit: z.string().optional(),
      workingDir: z.string().optional(),
    })
    .optional(),
  verified: z.boolean(),
  note: z.string(),
});
export type ImageVerification = z.infer<typeof ImageVerificationSchema>;
