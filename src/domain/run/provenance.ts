import { z } from 'zod';

/** Provenance after resolution: detected from git where possible, otherwise taken from the spec. */
export const ResolvedProvenanceSchema = z.strictObject({
  repoCommit: z.string(),
  repoDirty: z.boolean(),
  repoSource: z.enum(['git', 'spec']),
  submodules: z.record(z.string(), z.string()),
  modelRevision: z.string(),
  orchestratorVersion: z.string(),
});
export type ResolvedProvenance = z.infer<typeof ResolvedProvenanceSchema>;
