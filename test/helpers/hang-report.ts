import { afterEach } from 'node:test';
import type { Client } from '@temporalio/client';

/**
 * What a hung workflow test says before it fails: every open workflow of the test's Temporal
 * servers, each with its stack trace (the `__stack_trace` query, answered by the test's worker) and
 * its pending activities (describe). It is printed when a test fails on its timeout, and, as the
 * node runner kills a whole file at the same --test-timeout without a word, a little before that
 * file deadline too.
 */
const clients = new Set<Client>();

/** Adds a server's client to the report (the environment helpers call this); returns a remover. */
export function reportHangsOf(client: Client): () => void {
  clients.add(client);
  armFileDeadline();
  return () => clients.delete(client);
}

afterEach(async (t) => {
  // TestContext.error: in Node 20's runner, not yet in its types.
  const error = (t as { error?: { failureType?: string } }).error;
  if (error?.failureType === 'testTimeoutFailure') await printHangReport(`"${t.name}" timed out`);
});

let armed = false;
function armFileDeadline(): void {
  if (armed) return;
  armed = true;
  const flag = process.execArgv.find((a) => a.startsWith('--test-timeout='));
  const limitMs = Number(flag?.split('=')[1]);
  if (!Number.isFinite(limitMs) || limitMs <= 0) return;
  // The report needs a few seconds (a query per workflow): it starts this long before the kill.
  const marginMs = Math.min(30_000, limitMs / 10);
  const inMs = limitMs - marginMs - process.uptime() * 1000;
  setTimeout(
    () => void printHangReport(`the file is ${marginMs / 1000} s from its ${limitMs / 1000} s limit`),
    inMs,
  ).unref();
}

/** At most `ms` for one call to the server or worker: a report never hangs itself. */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms / 1000} s`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

async function openWorkflows(client: Client): Promise<{ workflowId: string; runId: string; type: string }[]> {
  const { executions } = await client.workflowService.listOpenWorkflowExecutions({
    namespace: client.options.namespace,
    maximumPageSize: 100,
  });
  return (executions ?? []).map((e) => ({
    workflowId: e.execution?.workflowId ?? '?',
    runId: e.execution?.runId ?? '',
    type: e.type?.name ?? '?',
  }));
}

const indent = (text: string, by: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => by + l)
    .join('\n');

/** One open workflow: its pending activities and its stack trace, as lines. */
async function describeOpen(client: Client, wf: { workflowId: string; runId: string; type: string }) {
  const handle = client.workflow.getHandle(wf.workflowId, wf.runId);
  const lines = [`-- workflow ${wf.workflowId} (${wf.type}, run ${wf.runId})`];
  try {
    const { raw } = await within(5_000, handle.describe());
    const pending = raw.pendingActivities ?? [];
    lines.push(pending.length === 0 ? '   pending activities: none' : '   pending activities:');
    for (const a of pending) {
      const beat = a.lastHeartbeatTime?.seconds
        ? `, last heartbeat at ${new Date(Number(a.lastHeartbeatTime.seconds) * 1000).toISOString()}`
        : '';
      const failed = a.lastFailure?.message ? `, last failure: ${a.lastFailure.message}` : '';
      lines.push(
        `   - ${a.activityType?.name} (id ${a.activityId}, state ${stateName(a.state)}, attempt ${a.attempt}${beat}${failed})`,
      );
    }
    for (const c of raw.pendingChildren ?? [])
      lines.push(`   pending child: ${c.workflowId} (${c.workflowTypeName})`);
  } catch (err) {
    lines.push(`   describe failed: ${(err as Error).message}`);
  }
  try {
    const stack = await within(5_000, handle.query<string>('__stack_trace'));
    lines.push(
      '   stack trace (where each pending promise waits; SDK frames left out):',
      indent(ownFrames(stack), '     '),
    );
  } catch (err) {
    lines.push(`   stack trace: none (${(err as Error).message})`);
  }
  return lines.join('\n');
}

/** The stack trace's groups (one per pending promise), the project's frames only, each once. */
function ownFrames(stack: string): string {
  const sdk = /node_modules|node:|evalmachine|<anonymous>|^\s*at (input|composedNext) /;
  const groups = stack.split(/\n\s*\n/).map((g) =>
    g
      .split('\n')
      .filter((l) => l.trim() !== '' && !sdk.test(l))
      .map((l) => l.trim())
      .join('\n'),
  );
  const kept = [...new Set(groups.filter((g) => g !== ''))];
  // A group that is the tail of another says nothing more.
  return kept.filter((g) => !kept.some((h) => h !== g && h.endsWith(`\n${g}`))).join('\n\n') || stack;
}

const STATES = ['UNSPECIFIED', 'SCHEDULED', 'STARTED', 'CANCEL_REQUESTED', 'PAUSED', 'PAUSE_REQUESTED'];
const stateName = (s: unknown) => (typeof s === 'number' ? (STATES[s] ?? String(s)) : String(s));

/** Workflows described in full (a stack query and a describe each); the others are named. */
const DESCRIBED = 8;

/**
 * Prints the report for every client, each part as soon as it is read (a file is killed at its
 * limit whatever the report still had to say); what cannot be read is named, never thrown.
 */
export async function printHangReport(why: string): Promise<void> {
  console.error(`== hang report: ${why}`);
  for (const client of clients) {
    try {
      const open = await within(5_000, openWorkflows(client));
      console.error(`${open.length} open workflow(s): ${open.map((w) => w.workflowId).join(', ')}`);
      // Children last: the workflows the test started say most about where it waits.
      const ordered = [...open].sort(
        (a, b) => Number(a.type === 'experiment') - Number(b.type === 'experiment'),
      );
      const described = await Promise.all(
        ordered
          .slice(0, DESCRIBED)
          .map((wf) => describeOpen(client, wf).then((text) => (console.error(text), text))),
      );
      if (open.length > described.length)
        console.error(`(${open.length - described.length} more not described)`);
    } catch (err) {
      console.error(`could not list the open workflows: ${(err as Error).message}`);
    }
  }
  console.error('== end of hang report');
}
