import type { z } from 'zod';

export interface SpecIssue {
  /** Dotted field path, e.g. `trainer.nnodes` or `cluster.workerGroups[0].replicas`. */
  field: string;
  message: string;
}

/** Bad input, found before anything is created: each issue names the field and the fix. */
export class SpecError extends Error {
  constructor(
    readonly source: string,
    readonly issues: SpecIssue[],
    kind = 'experiment spec',
  ) {
    super(`${source}: invalid ${kind}\n${issues.map((i) => `  - ${i.field || '(root)'}: ${i.message}`).join('\n')}`);
    this.name = 'SpecError';
  }
}

export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)), '');
}

/** zod issues → field + fix, with extra help where zod's own words do not say what to do. */
export function issuesFromZod(error: z.ZodError): SpecIssue[] {
  return error.issues.map((issue) => {
    const field = fieldPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const where = field || 'the top level';
      return { field: issue.keys.map((k) => (field ? `${field}.${k}` : k)).join(', '), message: `unknown field at ${where}; remove it or fix its spelling` };
    }
    if (issue.code === 'invalid_key') {
      // A record key (an env name, a node label key): zod's own words are only "Invalid key in record".
      return { field, message: `bad key: ${issue.issues.map((i) => i.message).join('; ')}` };
    }
    if (issue.code === 'invalid_type' && issue.input === undefined) {
      return { field, message: `is required (${issue.expected})` };
    }
    return { field, message: issue.message };
  });
}
