import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { ExperimentSpecSchema, type ExperimentSpec } from '../../domain/spec/experiment.js';
import { runSetupIssues } from '../../domain/spec/run-setup.js';
import { SpecError, issuesFromZod } from '../../domain/spec/spec-error.js';

/** Parse YAML text into a plain mapping; throws SpecError on malformed YAML or a non-mapping. */
export function parseYamlMapping(text: string, source = 'spec', kind?: string): Record<string, unknown> {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new SpecError(
      source,
      doc.errors.map((e) => ({
        field: '(yaml)',
        message: `malformed YAML: ${e.message.split('\n')[0]} — fix the syntax at line ${e.linePos?.[0]?.line ?? '?'}`,
      })),
      kind,
    );
  }
  const raw: unknown = doc.toJS();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SpecError(
      source,
      [
        {
          field: '(root)',
          message: 'the spec must be a YAML mapping with name, rayVersion, cluster, trainer and storage',
        },
      ],
      kind,
    );
  }
  return raw as Record<string, unknown>;
}

/** Parse YAML text into a validated spec; throws SpecError naming each bad field. */
export function parseExperimentSpec(text: string, source = 'spec'): ExperimentSpec {
  const parsed = ExperimentSpecSchema.safeParse(parseYamlMapping(text, source));
  if (!parsed.success) throw new SpecError(source, issuesFromZod(parsed.error));
  const issues = runSetupIssues(parsed.data);
  if (issues.length > 0) throw new SpecError(source, issues);
  return parsed.data;
}

export async function readSpecFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new SpecError(path, [
      { field: '(file)', message: `cannot read the spec file: ${(err as Error).message}` },
    ]);
  }
}

export async function loadExperimentSpec(path: string): Promise<ExperimentSpec> {
  return parseExperimentSpec(await readSpecFile(path), path);
}
