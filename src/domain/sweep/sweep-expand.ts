/** Pure sweep expansion (grid x seeded random), parameter application and child ids; no I/O. */
import { ExperimentSpecSchema, type ExperimentSpec } from '../spec/experiment.js';
import { shortHash } from '../spec/naming.js';
import { issuesFromZod } from '../spec/spec-error.js';
import type { Distribution, ParamSet, ParamValue, SweepSpec } from './sweep.js';

/** Spec sections a parameter may set directly; every other top-level key is fixed by the base. */
const SWEEPABLE_SECTIONS = new Set(['trainer', 'validation', 'deadlines', 'join']);
const FIXED_SECTIONS = new Set([
  'name',
  'backend',
  'image',
  'rayVersion',
  'cluster',
  'storage',
  'provenance',
]);

/** mulberry32: a small seeded PRNG, so a random sweep expands to the same samples everywhere. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Six significant digits: readable overrides, and no last-bit drift between machines. */
const round6 = (x: number) => Number(x.toPrecision(6));

function sample(d: Distribution, u: number): ParamValue {
  if ('choice' in d)
    return d.choice[Math.min(d.choice.length - 1, Math.floor(u * d.choice.length))] as ParamValue;
  if ('uniform' in d) return round6(d.uniform[0] + u * (d.uniform[1] - d.uniform[0]));
  if ('logUniform' in d)
    return round6(
      Math.exp(Math.log(d.logUniform[0]) + u * (Math.log(d.logUniform[1]) - Math.log(d.logUniform[0]))),
    );
  const [lo, hi] = d.intRange;
  return Math.min(hi, lo + Math.floor(u * (hi - lo + 1)));
}

/** Cartesian product of the grid lists, the last key varying fastest. */
function gridPoints(grid: Record<string, ParamValue[]>): ParamSet[] {
  let points: ParamSet[] = [{}];
  for (const [key, values] of Object.entries(grid))
    points = points.flatMap((p) => values.map((v) => ({ ...p, [key]: v })));
  return points;
}

/** Keys sorted, so `{a, b}` and `{b, a}` are the same parameter set. */
export function canonicalParams(params: ParamSet): string {
  return JSON.stringify(
    Object.keys(params)
      .sort()
      .map((k) => [k, params[k]]),
  );
}

/**
 * Every child's parameters, in a fixed order: each grid point combined with each random sample
 * (samples drawn from the seeded PRNG, keys in sorted order). Identical sets are kept once, at
 * their first position, so the same parameters never run twice in one sweep.
 */
export function expandSweep(sweep: Pick<SweepSpec, 'parameters'>): ParamSet[] {
  const grid = gridPoints(sweep.parameters.grid);
  const random = sweep.parameters.random;
  let samples: ParamSet[] = [{}];
  if (random) {
    const next = seededRandom(random.seed);
    const keys = Object.keys(random.params).sort();
    samples = Array.from({ length: random.count }, () =>
      Object.fromEntries(keys.map((k) => [k, sample(random.params[k] as Distribution, next())])),
    );
  }
  const seen = new Set<string>();
  const out: ParamSet[] = [];
  for (const g of grid) {
    for (const s of samples) {
      const params = { ...g, ...s };
      const key = canonicalParams(params);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(params);
    }
  }
  return out;
}

/** Number of children before expansion (grid size x random count), to refuse huge sweeps cheaply. */
export function plannedChildren(sweep: Pick<SweepSpec, 'parameters'>): number {
  const grid = Object.values(sweep.parameters.grid).reduce((n, v) => n * v.length, 1);
  return grid * (sweep.parameters.random?.count ?? 1);
}

/** `<sweep id>-<index>-<FNV-1a of the canonical parameters>`: stable, and distinct per parameter set. */
export function childWorkflowId(sweepId: string, index: number, params: ParamSet): string {
  return `${sweepId}-${index}-${shortHash(canonicalParams(params))}`;
}

/** Where a parameter key lands: a spec field path, or a trainer override. */
export type ParamTarget =
  { kind: 'field'; path: string[] } | { kind: 'override'; key: string } | { kind: 'refused'; reason: string };

/**
 * A key whose first segment is a sweepable spec section (`trainer.seedTrain`, `validation.seed`)
 * sets that field; `trainer.overrides.<key>` and every key outside the spec (`algorithm.lr`) are
 * trainer overrides; name, cluster, storage and the other fixed sections cannot be swept.
 */
export function paramTarget(key: string): ParamTarget {
  const [head] = key.split('.');
  if (key.startsWith('trainer.overrides.'))
    return { kind: 'override', key: key.slice('trainer.overrides.'.length) };
  if (head && SWEEPABLE_SECTIONS.has(head)) return { kind: 'field', path: key.split('.') };
  if (head && FIXED_SECTIONS.has(head)) {
    return {
      kind: 'refused',
      reason: `'${head}' is fixed by the base experiment and cannot be swept; sweep trainer.*, validation.*, deadlines.*, join.* or a trainer override`,
    };
  }
  return { kind: 'override', key };
}

export type ApplyResult =
  { ok: true; spec: ExperimentSpec } | { ok: false; issues: { field: string; message: string }[] };

/** The base spec with one child's parameters applied, validated again by the experiment schema. */
export function applyParams(base: ExperimentSpec, params: ParamSet): ApplyResult {
  const raw = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  const issues: { field: string; message: string }[] = [];
  for (const [key, value] of Object.entries(params)) {
    const target = paramTarget(key);
    if (target.kind === 'refused') {
      issues.push({ field: key, message: target.reason });
    } else if (target.kind === 'override') {
      const trainer = raw['trainer'] as { overrides: Record<string, ParamValue> };
      trainer.overrides = { ...trainer.overrides, [target.key]: value };
    } else {
      let node = raw;
      for (const segment of target.path.slice(0, -1)) {
        const child = node[segment];
        if (child === null || typeof child !== 'object' || Array.isArray(child)) {
          issues.push({
            field: key,
            message: `'${segment}' is not a section of the experiment spec; check the key's spelling`,
          });
          node = {};
          break;
        }
        node = child as Record<string, unknown>;
      }
      node[target.path.at(-1) as string] = value;
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  const parsed = ExperimentSpecSchema.safeParse(raw);
  if (parsed.success) return { ok: true, spec: parsed.data };
  return { ok: false, issues: issuesFromZod(parsed.error) };
}
