import { readFile } from 'node:fs/promises';
import { ExperimentSpecSchema, type ExperimentSpec } from '../../domain/spec/experiment.js';
import { runSetupIssues } from '../../domain/spec/run-setup.js';
import { parseYamlMapping } from '../../config/yaml-mapping.js';
import { SpecError, issuesFromZod } from '../../domain/spec/spec-error.js';

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
