import { z } from 'zod';

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
    super(
      `${source}: invalid ${kind}\n${issues.map((i) => `  - ${i.field || '(root)'}: ${i.message}`).join('\n')}`,
    );
    this.name = 'SpecError';
  }
}

export function fieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, key) => (typeof key === 'number' ? `${acc}[${key}]` : acc ? `${acc}.${String(key)}` : String(key)),
    '',
  );
}

const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
};

function shown(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/**
 * zod's default words for a value of the wrong type do not say what was given, and its issues carry
 * no input: this map says both (`expected an integer, got 0.5`) or that the field is missing.
 * Installed once for every schema; messages a schema sets itself take precedence.
 */
z.config({
  customError: (issue) => {
    if (issue.code !== 'invalid_type') return undefined;
    const expected = EXPECTED[issue.expected] ?? issue.expected;
    return issue.input === undefined
      ? `is required (${expected})`
      : `expected ${expected}, got ${shown(issue.input)}`;
  },
});

/** zod issues → field + fix, with extra help where zod's own words do not say what to do. */
export function issuesFromZod(error: z.ZodError): SpecIssue[] {
  return error.issues.map((issue) => {
    const field = fieldPath(issue.path);
    if (issue.code === 'unrecognized_keys') {
      const where = field || 'the top level';
      return {
        field: issue.keys.map((k) => (field ? `${field}.${k}` : k)).join(', '),
        message: `unknown field at ${where}; remove it or fix its spelling`,
      };
    }
    if (issue.code === 'invalid_key') {
      // A record key (an env name, a node label key): zod's own words are only "Invalid key in record".
      return { field, message: `bad key: ${issue.issues.map((i) => i.message).join('; ')}` };
    }
    return { field, message: issue.message };
  });
}
