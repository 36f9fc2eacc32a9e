import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  type Client,
  type ScheduleDescription,
  ScheduleOverlapPolicy,
  type ScheduleOptions,
} from '@temporalio/client';
import type { OrchestratorConfig } from '../config/config.js';
import { resolveProvenance } from '../provenance/git.js';

import { checkShippedCode } from './spec-files/code-check.js';
import type { ExperimentInput } from '../domain/run/experiment-input.js';
import { parseExperimentSpec } from './spec-files/load.js';
import { parseYamlMapping } from '../config/yaml-mapping.js';
import { looksLikeSweep, parseSweepSpec } from './spec-files/load-sweep.js';
import {
  SCHEDULE_MEMO_KEY,
  ScheduleRequestSchema,
  type ScheduleMemo,
  type ScheduleRequest,
} from '../domain/spec/schedule.js';
import { SpecError, issuesFromZod } from '../domain/spec/spec-error.js';
import type { SweepInput } from '../domain/sweep/sweep.js';
import { withClient } from './client.js';
import { experimentStart, sweepStart } from './start-options.js';
import { type Who, owned } from './owned.js';
import { UsageError } from '../config/user-errors.js';

/** What a schedule starts: a sweep or a single experiment, validated and embedded at create time. */
export type ScheduledAction =
  { kind: 'sweep'; input: SweepInput } | { kind: 'experiment'; input: ExperimentInput };

const OVERLAP: Record<ScheduleRequest['overlap'], ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  buffer_one: ScheduleOverlapPolicy.BUFFER_ONE,
  buffer_all: ScheduleOverlapPolicy.BUFFER_ALL,
  cancel_other: ScheduleOverlapPolicy.CANCEL_OTHER,
  terminate_other: ScheduleOverlapPolicy.TERMINATE_OTHER,
  allow_all: ScheduleOverlapPolicy.ALLOW_ALL,
};

/** Load a sweep spec (it has `parameters`/`base`) or an experiment spec; bad input is a SpecError. */
export async function loadScheduledAction(specPath: string, who: Who = {}): Promise<ScheduledAction> {
  let text: string;
  try {
    text = await readFile(specPath, 'utf8');
  } catch (err) {
    throw new SpecError(specPath, [
      { field: '(file)', message: `cannot read the spec file: ${(err as Error).message}` },
    ]);
  }
  if (looksLikeSweep(parseYamlMapping(text, specPath))) {
    const parsed = await parseSweepSpec(text, specPath, dirname(specPath));
    const sweep = { ...parsed, base: owned(parsed.base, who) };
    await checkShippedCode(sweep.base, specPath, 'base.');
    return { kind: 'sweep', input: { sweep, provenance: await resolveProvenance(sweep.base) } };
  }
  const spec = owned(parseExperimentSpec(text, specPath), who);
  await checkShippedCode(spec, specPath);
  return { kind: 'experiment', input: { spec, provenance: await resolveProvenance(spec) } };
}

/** Parse `schedule create` flags into a validated request (field and fix on bad input). */
export function parseScheduleRequest(raw: Record<string, unknown>): ScheduleRequest {
  const parsed = ScheduleRequestSchema.safeParse(raw);
  if (!parsed.success) throw new SpecError('schedule create', issuesFromZod(parsed.error), 'schedule');
  return parsed.data;
}

/** The Temporal Schedule for a request and its action (pure, so tests can read it). */
export function scheduleOptions(
  request: ScheduleRequest,
  action: ScheduledAction,
  taskQueue: string,
): ScheduleOptions {
  const name = action.kind === 'sweep' ? action.input.sweep.name : action.input.spec.name;
  return {
    scheduleId: request.scheduleId,
    spec: request.cron
      ? { cronExpressions: [request.cron] }
      : { intervals: [{ every: request.every as string }] },
    // The server appends the scheduled time to this id, so every fire has its own sweep id.
    action: {
      type: 'startWorkflow',
      workflowType: action.kind,
      workflowId: `${action.kind}-${name}`,
      taskQueue,
      args: [action.input],
      memo: {
        [SCHEDULE_MEMO_KEY]: {
          scheduleId: request.scheduleId,
          pauseOnFailure: request.pauseOnFailure,
        } satisfies ScheduleMemo,
      },
      // The sweep's own id is known only when it fires: the sweep sets RagenSweepId itself.
      ...(action.kind === 'sweep' ? sweepStart(action.input.sweep) : experimentStart(action.input.spec)),
    },
    policies: {
      overlap: OVERLAP[request.overlap],
      catchupWindow: request.catchupWindow,
      pauseOnFailure: request.pauseOnFailure,
    },
    memo: {
      kind: action.kind,
      name,
      when: request.cron ? `cron '${request.cron}'` : `every ${request.every}`,
    },
  };
}

export async function createSchedule(
  client: Client,
  request: ScheduleRequest,
  action: ScheduledAction,
  taskQueue: string,
): Promise<void> {
  await client.schedule.create(scheduleOptions(request, action, taskQueue));
}

/** `trigger` runs the action now under the schedule's own overlap policy (the SDK default would allow overlap). */
export async function triggerSchedule(client: Client, scheduleId: string): Promise<void> {
  const handle = client.schedule.getHandle(scheduleId);
  const { policies } = await handle.describe();
  await handle.trigger(policies.overlap);
}

const iso = (d: Date | undefined) => (d ? d.toISOString().replace('.000Z', 'Z') : '-');

function specText(d: ScheduleDescription): string {
  const cron = d.spec.calendars?.length ? `calendar ${JSON.stringify(d.spec.calendars)}` : '';
  const every = (d.spec.intervals ?? []).map((i) => `every ${String(i.every)} ms`).join(', ');
  return [every, cron].filter(Boolean).join('; ') || '-';
}

/** Human-readable description: what it runs, when, its policies and its recent and running actions. */
export function describeText(id: string, d: ScheduleDescription): string {
  const memo = (d.memo ?? {}) as { kind?: string; name?: string; when?: string };
  const lines = [
    `${id}: ${memo.kind ?? d.action.workflowType} ${memo.name ?? ''} (${d.action.type === 'startWorkflow' ? d.action.workflowType : '?'})`,
    `  spec:     ${memo.when ?? specText(d)}`,
    `  state:    ${d.state.paused ? `paused${d.state.note ? ` (${d.state.note})` : ''}` : 'active'}`,
    `  policies: overlap ${d.policies.overlap}, catch-up window ${d.policies.catchupWindow / 1000} s, pause on failure ${d.policies.pauseOnFailure}`,
    `  actions:  ${d.info.numActionsTaken} taken, ${d.info.numActionsSkippedOverlap} skipped (overlap), ${d.info.runningActions.length} running`,
    ...d.info.runningActions.map((a) => `    running ${a.workflow.workflowId}`),
    ...d.info.recentActions
      .slice(-5)
      .map((a) => `    recent  ${iso(a.takenAt)} ${a.action.workflow.workflowId}`),
    `  next:     ${d.info.nextActionTimes.slice(0, 3).map(iso).join(', ') || '-'}`,
  ];
  return lines.join('\n');
}

export type ScheduleVerb = 'list' | 'describe' | 'pause' | 'unpause' | 'delete' | 'trigger';

/** `schedule create`, checked: the request's flags and the spec, validated before any connection. */
export async function prepareScheduleCreate(
  scheduleId: string,
  specPath: string,
  flags: Record<string, unknown>,
  who: Who = {},
): Promise<{ request: ScheduleRequest; action: ScheduledAction }> {
  const request = parseScheduleRequest({ ...flags, scheduleId });
  return { request, action: await loadScheduledAction(specPath, who) };
}

export async function scheduleCreateCommand(
  config: OrchestratorConfig,
  { request, action }: { request: ScheduleRequest; action: ScheduledAction },
): Promise<number> {
  return withClient(config, async (client) => {
    await createSchedule(client, request, action, config.RAGEN_TASK_QUEUE);
    const when = request.cron ? `cron '${request.cron}'` : `every ${request.every}`;
    console.log(
      `schedule '${request.scheduleId}' created: ${action.kind} ${when}, overlap ${request.overlap}, catch-up ${request.catchupWindow}, pause on failure ${request.pauseOnFailure}`,
    );
    return 0;
  });
}

/** `schedule list|describe|pause|unpause|delete|trigger` from the CLI. */
export async function scheduleCommand(
  config: OrchestratorConfig,
  verb: ScheduleVerb,
  id: string | undefined,
  opts: { note?: string | undefined },
): Promise<number> {
  return withClient(config, async (client) => {
    if (verb === 'list') {
      for await (const s of client.schedule.list()) {
        const memo = (s.memo ?? {}) as { kind?: string; name?: string; when?: string };
        console.log(
          `${s.scheduleId}  ${memo.kind ?? '-'} ${memo.name ?? ''}  ${memo.when ?? ''}  ${s.state.paused ? 'paused' : 'active'}  next ${iso(s.info.nextActionTimes[0])}`,
        );
      }
      return 0;
    }
    if (!id) throw new UsageError(`schedule ${verb}: give the schedule id (see schedule list)`);
    const handle = client.schedule.getHandle(id);
    switch (verb) {
      case 'describe':
        console.log(describeText(id, await handle.describe()));
        break;
      case 'pause':
        await handle.pause(opts.note ?? 'paused from the CLI');
        console.log(`schedule '${id}' paused`);
        break;
      case 'unpause':
        await handle.unpause(opts.note ?? 'unpaused from the CLI');
        console.log(`schedule '${id}' unpaused`);
        break;
      case 'delete':
        await handle.delete();
        console.log(`schedule '${id}' deleted (running workflows it started keep running)`);
        break;
      case 'trigger':
        await triggerSchedule(client, id);
        console.log(`schedule '${id}' triggered (under its overlap policy)`);
        break;
    }
    return 0;
  });
}
