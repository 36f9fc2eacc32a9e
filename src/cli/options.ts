import { statSync } from 'node:fs';
import { z } from 'zod';
import { fieldPath } from '../domain/spec/spec-error.js';
import { UsageBucketSchema } from '../domain/usage/usage.js';
import { UsageError } from '../config/user-errors.js';

/** A spec file that exists: a missing one is one line naming the path and the fix. */
const SpecFile = z.string().superRefine((path, ctx) => {
  let file = false;
  try {
    file = statSync(path).isFile();
  } catch {
    // does not exist or cannot be read: reported below
  }
  if (!file) {
    ctx.addIssue({
      code: 'custom',
      message: `no spec file at '${path}': give the path of a YAML spec (e.g. examples/sokoban-local.yaml)`,
    });
  }
});

/** A number of seconds given as a flag's value; `what` says which numbers are allowed. */
function seconds(what: string, ok: (n: number) => boolean) {
  return z
    .string()
    .superRefine((v, ctx) => {
      const n = Number(v);
      if (v.trim() === '' || !Number.isFinite(n) || !ok(n)) {
        ctx.addIssue({ code: 'custom', message: `expected ${what}, got '${v}'` });
      }
    })
    .transform(Number);
}

const WorkflowId = z.string().min(1, 'give the workflow id (printed when it started)');

/** A `list` filter value: quotes and backslashes would change the visibility query. */
const FilterValue = z
  .string()
  .min(1, 'give a value')
  .regex(/^[^'"\\]+$/, 'quotes and backslashes cannot be part of a filter value');

const OUTCOMES = ['succeeded', 'failed', 'cancelled', 'paused', 'earlyStopped', 'pruned'] as const;

/** --owner/--team of a start: checked with the spec (domain/usage/ownership.ts), so any string here. */
const Who = { owner: z.string().optional(), team: z.string().optional() };

/**
 * A moment for `usage --since/--until`: a UTC date (2026-12-01) or a date and time with its zone
 * (2026-12-01T09:00:00Z); a time without a zone would depend on the machine, so it is refused.
 */
const Moment = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/,
    'expected a date like 2026-12-01 (00:00 UTC) or a time with its zone like 2026-12-01T09:30:00Z',
  )
  .refine((v) => {
    // Date.parse rolls 2026-02-30 over to March: the day must survive the round trip.
    const [y, m, d] = v.slice(0, 10).split('-').map(Number) as [number, number, number];
    return new Date(Date.UTC(y, m - 1, d)).getUTCDate() === d && Number.isFinite(Date.parse(v));
  }, 'not a calendar date')
  .transform((v) => new Date(v).toISOString());

/** One zod schema per command: what commander hands over is checked here before anything runs. */
export const CommandSchemas = {
  run: z.strictObject({ spec: SpecFile, embedded: z.boolean().default(false), ...Who }),
  sweep: z.strictObject({ spec: SpecFile, embedded: z.boolean().default(false), ...Who }),
  campaign: z.strictObject({ spec: SpecFile, embedded: z.boolean().default(false), ...Who }),
  workflow: z.strictObject({ workflowId: WorkflowId }),
  logs: z.strictObject({ workflowId: WorkflowId, follow: z.boolean().default(false) }),
  campaignExtend: z.strictObject({
    workflowId: WorkflowId,
    steps: z
      .string()
      .regex(
        /^[1-9]\d*$/,
        'give the number of extra steps as a positive integer, e.g. campaign extend <id> 100',
      )
      .transform(Number),
  }),
  sweepSet: z
    .strictObject({
      workflowId: WorkflowId,
      concurrency: z
        .string()
        .regex(/^[1-9]\d*$/, 'give --concurrency as a positive integer, e.g. --concurrency 4')
        .transform(Number)
        .optional(),
      failureBudget: z
        .string()
        .regex(/^[1-9]\d*$/, 'give --failure-budget as a positive integer, e.g. --failure-budget 3')
        .transform(Number)
        .optional(),
    })
    .refine((o) => o.concurrency !== undefined || o.failureBudget !== undefined, {
      message: 'nothing to change: give --concurrency N and/or --failure-budget K',
      path: ['concurrency'],
    }),
  reaperInstall: z.strictObject({
    every: seconds('a number of seconds > 0', (n) => n > 0),
    grace: seconds('a number of seconds >= 0', (n) => n >= 0),
  }),
  scheduleCreate: z.strictObject({
    scheduleId: z.string(),
    spec: SpecFile,
    cron: z.string().optional(),
    every: z.string().optional(),
    overlap: z.string().optional(),
    catchup: z.string().optional(),
    pauseOnFailure: z.boolean(),
    ...Who,
  }),
  scheduleId: z.strictObject({ scheduleId: z.string().min(1, 'give the schedule id (see schedule list)') }),
  scheduleNote: z.strictObject({ scheduleId: z.string().min(1), note: z.string().optional() }),
  list: z.strictObject({
    kind: z
      .enum(['experiment', 'campaign', 'sweep'], { message: 'expected experiment, campaign or sweep' })
      .optional(),
    sweep: FilterValue.optional(),
    campaign: FilterValue.optional(),
    outcome: z.enum(OUTCOMES, { message: `expected one of ${OUTCOMES.join(', ')}` }).optional(),
    name: FilterValue.optional(),
    owner: FilterValue.optional(),
    team: FilterValue.optional(),
    running: z.boolean().default(false),
    limit: z
      .string()
      .regex(/^[1-9]\d*$/, 'expected a positive whole number, e.g. --limit 100')
      .transform(Number)
      .default(50),
  }),
  usage: z
    .strictObject({
      since: Moment,
      until: Moment.optional(),
      by: UsageBucketSchema.default('day'),
      format: z
        .enum(['table', 'csv', 'json', 'html'], { message: 'expected table, csv, json or html' })
        .default('table'),
      owner: FilterValue.optional(),
      team: FilterValue.optional(),
      pricePerGpuHour: z
        .string()
        .refine((v) => v.trim() !== '' && Number(v) >= 0, 'expected a price of 0 or more, e.g. 2.50')
        .transform(Number)
        .optional(),
      currency: z.string().min(1).default('USD'),
      out: z.string().min(1).optional(),
    })
    .refine((o) => o.until === undefined || o.until > o.since, {
      path: ['until'],
      message: 'must be later than --since',
    }),
  none: z.strictObject({}),
  budgetsApply: z.strictObject({ file: z.string().min(1, 'give the budgets file, e.g. budgets.yaml') }),
  budgetsReport: z.strictObject({
    team: z.string().min(1).optional(),
    file: z.string().min(1).optional(),
    format: z.enum(['table', 'json'], { message: 'expected table or json' }).default('table'),
  }),
  nodes: z.strictObject({ backend: z.enum(['local', 'kuberay']), json: z.boolean().optional() }),
  nodesClear: z.strictObject({ backend: z.enum(['local', 'kuberay']), all: z.boolean().optional() }),
  report: z
    .strictObject({
      workflowId: z.string().min(1).optional(),
      from: z
        .string()
        .min(1, 'give an archive folder, e.g. --from <archiveDir>/<name>/<workflow id>')
        .optional(),
      out: z.string().min(1).optional(),
      key: z.array(z.string().min(1)).default([]),
      top: z
        .string()
        .regex(
          /^[1-9]\d*$/,
          'give how many of the best sweep children to overlay as a positive integer, e.g. --top 5',
        )
        .default('5')
        .transform(Number),
      force: z.boolean().default(false),
    })
    .refine((o) => o.workflowId !== undefined || o.from !== undefined, {
      path: ['workflowId'],
      message: 'give the workflow id, or an archive folder with --from <dir> (no server needed)',
    }),
} as const;

/** How a field is spelt on the command line, for messages: `every` → `--every`. */
function flagName(field: string, positional: ReadonlySet<string>): string {
  if (positional.has(field))
    return `<${field === 'spec' ? 'spec.yaml' : field.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}>`;
  return `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

const POSITIONAL = new Set(['spec', 'workflowId', 'scheduleId', 'steps']);

/** Parse one command's input; bad input is a UsageError (exit 2) naming the flag and the fix. */
export function parseCommand<S extends z.ZodType>(command: string, schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map(
    (i) => `${command}: ${flagName(fieldPath(i.path), POSITIONAL)}: ${i.message}`,
  );
  throw new UsageError(lines.join('\n'));
}
