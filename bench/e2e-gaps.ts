/**
 * The orchestration gaps of one finished experiment, for bench/e2e.sh, from its Temporal history
 * (the manifest's stage records are workflow-task times and cannot show dispatch latency; the
 * history's event times can). Starts the dev server on the run's database file (port given),
 * reads the history and prints one JSON line:
 * - stageGaps: per pair of consecutive activities, next one's start minus previous one's completion;
 * - readyToFirstStep: join completed -> first progress signal with a step (as the worker saw it,
 *   i.e. up to one train poll late);
 * - gpuIdleStart: join completed -> train started, minus the all-reduce check (orchestration only);
 * - lastStepToDelete: last progress signal (final step / checkpoint; e2e.sh has every checkpoint
 *   signalled) -> teardown started;
 * - gpuIdleEnd: train completed -> teardown started, minus validation.
 * Usage: npx tsx bench/e2e-gaps.ts <workflow id> <db file> <port>
 */
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { loadConfig } from '../src/config/config.js';
import { startDevServer } from '../src/cli/dev-server.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const [workflowId, dbFile, port] = process.argv.slice(2);
if (!workflowId || !dbFile || !port) throw new Error('usage: e2e-gaps.ts <workflow id> <db file> <port>');

const ms = (e: HistoryEvent) => Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;

const server = await startDevServer({
  temporalBin: loadConfig().temporalBin,
  dbFile,
  port: Number(port),
  uiPort: Number(port) + 1000,
  logFile: `${dbFile}.gaps.log`,
});
try {
  const connection = await Connection.connect({ address: server.address });
  const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
  await connection.close();
  const events = history.events ?? [];
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  // One record per activity attempt that completed: name, started, completed.
  const activities: { name: string; started: number; completed: number }[] = [];
  for (const e of events) {
    const done = e.activityTaskCompletedEventAttributes;
    if (!done) continue;
    const scheduled = byId.get(Number(done.scheduledEventId));
    const started = byId.get(Number(done.startedEventId));
    const name = scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
    if (started) activities.push({ name, started: ms(started), completed: ms(e) });
  }
  const steps: { at: number; step: number }[] = [];
  for (const e of events) {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== 'progress') continue;
    const data = signal.input?.payloads?.[0]?.data;
    const progress = data ? (JSON.parse(Buffer.from(data).toString()) as { step?: number }) : {};
    if (progress.step !== undefined && progress.step > 0) steps.push({ at: ms(e), step: progress.step });
  }
  const find = (name: string) => activities.find((a) => a.name === name);
  const join = find('awaitJoin');
  const allReduce = find('allReduceCheck');
  const train = find('train');
  const validate = find('validate');
  const teardown = find('teardown');
  const stageGaps: Record<string, number> = {};
  for (let i = 1; i < activities.length; i++) {
    const [prev, next] = [activities[i - 1]!, activities[i]!];
    stageGaps[`${prev.name}>${next.name}`] = (next.started - prev.completed) / 1000;
  }
  const seconds = (v: number | undefined) => (v === undefined ? null : Math.round(v) / 1000);
  const dur = (a?: { started: number; completed: number }) => (a ? a.completed - a.started : 0);
  const first = steps[0];
  const last = steps.at(-1);
  console.log(
    JSON.stringify({
      stages: Object.fromEntries(activities.map((a) => [a.name, seconds(dur(a))])),
      stageGaps,
      readyToFirstStep: seconds(join && first ? first.at - join.completed : undefined),
      gpuIdleStart: seconds(join && train ? train.started - join.completed - dur(allReduce) : undefined),
      lastStepToDelete: seconds(last && teardown ? teardown.started - last.at : undefined),
      gpuIdleEnd: seconds(train && teardown ? teardown.started - train.completed - dur(validate) : undefined),
      historyEvents: events.length,
    }),
  );
} finally {
  await server.stop();
}
