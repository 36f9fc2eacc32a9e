import { ZIP_MAX_ENTRIES } from '../../backends/ray/stored-zip.js';
import { treeSizeIssue } from '../../domain/code/code-tree.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { SpecError } from '../../domain/spec/spec-error.js';
import { CodeTreeError, listCodeTree } from '../../provenance/code-tree.js';

/**
 * `code` checked where the spec enters (bad input stops before anything starts): the path is a
 * folder, and the files that would travel fit code.maxSizeMb. Lists the tree and sums sizes; packing
 * is the run's preflight. `field` prefixes the path in messages (a sweep's `base`).
 */
export async function checkShippedCode(spec: ExperimentSpec, source: string, field = ''): Promise<void> {
  if (!spec.code) return;
  const { path, exclude, maxSizeMb } = spec.code;
  try {
    const tree = await listCodeTree(path, exclude);
    const issue = treeSizeIssue(path, tree.files, { maxSizeMb, maxEntries: ZIP_MAX_ENTRIES });
    if (issue) throw new SpecError(source, [{ field: `${field}code.maxSizeMb`, message: issue }]);
  } catch (err) {
    if (err instanceof CodeTreeError)
      throw new SpecError(source, [{ field: `${field}${err.field}`, message: err.message }]);
    throw err;
  }
}
