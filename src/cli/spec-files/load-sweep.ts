import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseYamlMapping } from '../../config/yaml-mapping.js';
import { SpecError, issuesFromZod, type SpecIssue } from '../../domain/spec/spec-error.js';
import { MAX_SWEEP_CHILDREN, SweepSpecSchema, type SweepSpec } from '../../domain/sweep/sweep.js';
import { runSetupIssues } from '../../domain/spec/run-setup.js';
import { applyParams, expandSweep, plannedChildren } from '../../domain/sweep/sweep-expand.js';
import { tpeProbeSets } from '../../domain/sweep/sweep-search.js';

const KIND = 'sweep spec';

/**
 * Validate a sweep mapping whose `base` is already an experiment mapping: the schema, the size,
 * and every child's spec after its parameters are applied (a bad key or value names the child).
 */
export function parseSweepMapping(raw: Record<string, unknown>, source: string): SweepSpec {
  const parsed = SweepSpecSchema.safeParse(raw);
  if (!parsed.success) throw new SpecError(source, issuesFromZod(parsed.error), KIND);
  const sweep = parsed.data;
  const planned = sweep.search?.trials ?? plannedChildren(sweep);
  if (planned > MAX_SWEEP_CHILDREN) {
    throw new SpecError(
      source,
      [
        {
          field: 'parameters',
          message: `${planned} children planned; at most ${MAX_SWEEP_CHILDREN} per sweep: split the grid or lower parameters.random.count (search.trials)`,
        },
      ],
      KIND,
    );
  }
  const issues: SpecIssue[] = [];
  const seen = new Set<string>();
  // A search's values are known only when it runs: its range ends and choices stand in for them.
  const probed = sweep.search ? tpeProbeSets(sweep.search) : expandSweep(sweep);
  probed.forEach((params, index) => {
    const applied = applyParams(sweep.base, params);
    const childIssues = applied.ok ? runSetupIssues(applied.spec) : applied.issues;
    for (const issue of childIssues) {
      const key = `${issue.field}: ${issue.message}`;
      if (seen.has(key)) continue; // one line per distinct problem, not one per child
      seen.add(key);
      issues.push({
        field: `parameters → base.${issue.field}`,
        message: `${issue.message} (${sweep.search ? 'searched values' : `child ${index}`}: ${JSON.stringify(params)})`,
      });
    }
  });
  if (issues.length > 0) throw new SpecError(source, issues, KIND);
  return sweep;
}

/** Parse sweep YAML; `base` is an inline experiment or a path relative to the sweep file. */
export async function parseSweepSpec(text: string, source = 'sweep', baseDir = '.'): Promise<SweepSpec> {
  const raw = parseYamlMapping(text, source, KIND);
  if (typeof raw['base'] === 'string') {
    const basePath = resolve(baseDir, raw['base']);
    let baseText: string;
    try {
      baseText = await readFile(basePath, 'utf8');
    } catch (err) {
      throw new SpecError(
        source,
        [
          {
            field: 'base',
            message: `cannot read the base experiment ${basePath}: ${(err as Error).message}; give a path relative to the sweep file or an inline mapping`,
          },
        ],
        KIND,
      );
    }
    raw['base'] = parseYamlMapping(baseText, basePath);
  }
  return parseSweepMapping(raw, source);
}

export async function loadSweepSpec(path: string): Promise<SweepSpec> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new SpecError(
      path,
      [{ field: '(file)', message: `cannot read the sweep spec: ${(err as Error).message}` }],
      KIND,
    );
  }
  return parseSweepSpec(text, path, dirname(path));
}

/** True when a YAML file is a sweep (it has `base` and `parameters`), for commands that take either. */
export function looksLikeSweep(raw: Record<string, unknown>): boolean {
  return 'parameters' in raw || 'base' in raw;
}
