import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { ExperimentSpecSchema, type ExperimentSpec } from './experiment.js';
import { SpecError, issuesFromZod } from './spec-error.js';

/** YAML text to a plain mapping; malformed YAML and a non-mapping are SpecErrors with the line. */
export function parseYamlMapping(text: string, source: string, kind?: string): Record<string, unknown> {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new SpecError(
      source,
      doc.errors.map((e) => ({ field: '(yaml)', message: `malformed YAML: ${e.message.split('\n')[0]} — fix the syntax at line ${e.linePos?.[0]?.line ?? '?'}` })),
      kind,
    );
  }
  const raw: unknown = doc.toJS();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SpecError(source, [{ field: '(root)', message: 'the spec must be a YAML mapping with name, rayVersion, cluster, trainer and storage' }], kind);
  }
  return raw as Record<string, unknown>;
}

/** Parse YAML text into a validated spec; throws SpecError naming each bad field. */
export function parseExperimentSpec(text: string, source = 'spec'): ExperimentSpec {
  const parsed = ExperimentSpecSchema.safeParse(parseYamlMapping(text, source));
  if (!parsed.success) throw new SpecError(source, issuesFromZod(parsed.error));
  return parsed.data;
}

export async function loadExperimentSpec(path: string): Promise<ExperimentSpec> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new SpecError(path, [{ field: '(file)', message: `cannot read the spec file: ${(err as Error).message}` }]);
  }
  return parseExperimentSpec(text, path);
}
