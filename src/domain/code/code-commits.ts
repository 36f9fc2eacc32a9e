import { z } from 'zod';
import type { ExperimentSpec } from '../spec/experiment.js';
import type { ImageVerification } from '../spec/image.js';
import type { ResolvedProvenance } from '../run/provenance.js';

/**
 * The commits behind a run, each named for what it is: the code that trained (RAGEN/verl in the
 * image on kuberay, read from its labels; the payload in this repository on local) and the
 * orchestrator's own commit.
 */
export const CodeCommitsSchema = z.strictObject({
  trainedCode: z.strictObject({
    /**
     * image-labels: from the verified image's labels; orchestrator-repo: the local backend runs this
     * repo's payload; shipped-tree: the spec's `code`, packed with the jobs (manifest `code`).
     */
    from: z.enum(['image-labels', 'orchestrator-repo', 'shipped-tree', 'unknown']),
    commit: z.string().optional(),
    repository: z.string().optional(),
    ragenCommit: z.string().optional(),
    verlCommit: z.string().optional(),
    note: z.string().optional(),
  }),
  orchestrator: z.strictObject({ commit: z.string(), dirty: z.boolean(), version: z.string() }),
});
export type CodeCommits = z.infer<typeof CodeCommitsSchema>;

export function codeCommits(
  spec: Pick<ExperimentSpec, 'backend'>,
  provenance: ResolvedProvenance,
  image: ImageVerification,
): CodeCommits {
  const orchestrator = {
    commit: provenance.repoCommit,
    dirty: provenance.repoDirty,
    version: provenance.orchestratorVersion,
  };
  if (spec.backend === 'local') {
    return {
      trainedCode: {
        from: 'orchestrator-repo',
        commit: provenance.repoCommit,
        note: 'the local backend runs the payload of this repository',
      },
      orchestrator,
    };
  }
  const code = image.code ?? {};
  const trainedCode = {
    commit: code.revision,
    repository: code.source,
    ragenCommit: code.ragenCommit,
    verlCommit: code.verlCommit,
  };
  if (Object.values(trainedCode).every((v) => v === undefined)) {
    return {
      trainedCode: {
        from: 'unknown',
        note: 'the image has none of the labels org.opencontainers.image.revision, ai.ragen.commit, io.verl.commit; add them when building it',
      },
      orchestrator,
    };
  }
  return { trainedCode: { from: 'image-labels', ...trainedCode }, orchestrator };
}
