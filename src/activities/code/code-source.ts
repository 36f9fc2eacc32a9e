import { readFile } from 'node:fs/promises';
import { type CodeSource, ShippedCodeSchema } from '../../domain/code/code.js';
import type { CodeCommits } from '../../domain/code/code-commits.js';
import type { ManifestDraft } from '../../domain/run/manifest.js';
import { shippedCodePath } from '../../domain/spec/paths.js';

/** The run's shipped-code record (code.json, written at preflight), if the spec shipped a tree. */
async function shippedRecord(runDir: string) {
  const text = await readFile(shippedCodePath(runDir), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = ShippedCodeSchema.safeParse(JSON.parse(text));
  return parsed.success ? parsed.data : undefined;
}

/**
 * Where the code that trained came from, for the manifest: the tree the run shipped (its record
 * next to the manifest), else the image on kuberay (digest and code labels), else the worker's own
 * Python on the local backend. `commits.trainedCode` says the same for a shipped tree.
 */
export async function codeProvenance(
  runDir: string,
  draft: Pick<ManifestDraft, 'image' | 'cluster' | 'commits'>,
): Promise<{ code: CodeSource; commits?: CodeCommits }> {
  const shipped = await shippedRecord(runDir);
  if (shipped) {
    const trainedCode: CodeCommits['trainedCode'] = {
      from: 'shipped-tree',
      ...(shipped.git ? { commit: shipped.git.commit } : {}),
      note: shipped.git
        ? `${shipped.path}${shipped.git.dirty ? ' with local changes (code.diff and the archive hold them)' : ''}`
        : `${shipped.path}, not in git: the archive ${shipped.package} is the record`,
    };
    const commits = draft.commits ? { ...draft.commits, trainedCode } : undefined;
    return { code: { from: 'shipped', ...shipped }, ...(commits ? { commits } : {}) };
  }
  if (draft.cluster.backend === 'kuberay') {
    const labels = Object.fromEntries(
      Object.entries(draft.image.code ?? {}).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
    return {
      code: {
        from: 'image',
        ...(draft.image.ref ? { ref: draft.image.ref } : {}),
        ...(draft.image.digest ? { digest: draft.image.digest } : {}),
        labels,
      },
    };
  }
  return {
    code: {
      from: 'worker-python',
      note: "the local backend runs the payload installed in the worker's Python (commits.trainedCode)",
    },
  };
}
