import type { CheckpointRecord, StageRecord } from '../domain/run/results.js';
import { fmtNumber, fmtSeconds } from './format.js';
import type { Gantt, GanttBar, IdleSpan, TableModel } from './view-model.js';

export interface TimelineInput {
  stages: StageRecord[];
  checkpoints: CheckpointRecord[];
  /** GPUs of the cluster (worker replicas x GPUs per worker). */
  gpus: number;
  /**
   * Whether the records run to the end (the workflow's result, with archive and teardown);
   * the manifest's own list stops at the archive stage, which writes it.
   */
  complete: boolean;
  backend: 'local' | 'kuberay';
}

const ms = (iso: string) => Date.parse(iso);

/** The newest checkpoint's write time: the latest mtime among its files, when they were recorded. */
export function lastCheckpointTime(
  checkpoints: CheckpointRecord[],
): { step: number; at: number } | undefined {
  const last = [...checkpoints].sort((a, b) => b.step - a.step)[0];
  if (!last) return undefined;
  const mtimes = last.files.map((f) => f.mtimeMs).filter((m): m is number => m !== undefined);
  return mtimes.length ? { step: last.step, at: Math.max(...mtimes) } : undefined;
}

function secondsBetween(a: number, b: number): number {
  return Math.max(0, (b - a) / 1000);
}

/**
 * The stage timeline as Gantt bars, and the GPU time orchestration left idle, as far as the records
 * allow: (1) cluster ready -> first training step, less the all-reduce check; (2) last checkpoint ->
 * cluster delete requested, less validation. What the records cannot say is listed in `unknown`.
 */
export function buildGantt(input: TimelineInput): Gantt | undefined {
  const { stages, gpus } = input;
  if (stages.length === 0) return undefined;
  const origin = Math.min(...stages.map((s) => ms(s.startedAt)));
  const ends = stages.flatMap((s) => [ms(s.startedAt), s.endedAt ? ms(s.endedAt) : ms(s.startedAt)]);
  const last = Math.max(...ends);
  const rel = (t: number) => (t - origin) / 1000;
  const bars: GanttBar[] = stages.map((s) => ({
    label: s.attempt > 0 ? `${s.stage} (cluster ${s.attempt + 1})` : s.stage,
    start: rel(ms(s.startedAt)),
    end: rel(s.endedAt ? ms(s.endedAt) : last),
    open: !s.endedAt,
    outcome: s.outcome ?? 'running',
    ...(s.error ? { error: s.error } : {}),
  }));
  const idle: IdleSpan[] = [];
  const unknown: string[] = [];
  const span = (label: string, from: number, to: number, minus: number, note: string) => {
    const seconds = Math.max(0, secondsBetween(from, to) - minus);
    idle.push({ label, start: rel(from), end: rel(to), seconds, gpuSeconds: seconds * gpus, note });
  };

  const joins = stages.filter((s) => s.stage === 'join' && s.outcome === 'succeeded' && s.endedAt);
  const join = joins[joins.length - 1];
  const train = stages.find((s) => s.stage === 'train');
  if (join?.endedAt && train) {
    span(
      'cluster ready → training job submitted',
      ms(join.endedAt),
      ms(train.startedAt),
      0,
      'from the end of the join stage (workers joined, all-reduce check passed: the check itself is not counted) to the submission of the training job',
    );
    unknown.push(
      'from the training job’s submission to its first step (trainer start-up: model load, worker setup, initial validation): the manifest records no time for the first step, so the start-up span above is a lower bound',
      'the join stage covers waiting for workers and the all-reduce check together: the records do not say when the last worker joined',
    );
    if (input.backend === 'kuberay')
      unknown.push('the shared-storage proof on KubeRay runs inside the join stage and is not separated');
  } else {
    unknown.push('no join followed by a training stage in the records: the start-up gap cannot be measured');
  }

  const checkpoint = lastCheckpointTime(input.checkpoints);
  const teardowns = stages.filter((s) => s.stage === 'teardown');
  const teardown = teardowns[teardowns.length - 1];
  const archive = stages.find((s) => s.stage === 'archive');
  const end =
    input.complete && teardown ? ms(teardown.startedAt) : archive ? ms(archive.startedAt) : undefined;
  const trainedFrom = train ? ms(train.startedAt) : undefined;
  if (checkpoint && trainedFrom !== undefined && checkpoint.at < trainedFrom) {
    unknown.push(
      `the newest checkpoint (step ${checkpoint.step}) predates this run's training: no checkpoint was written in it, so the end gap is not measured`,
    );
  } else if (checkpoint && end !== undefined) {
    const from = checkpoint.at;
    const validate = stages.find((s) => s.stage === 'validate' && s.endedAt && ms(s.startedAt) >= from);
    const validationSeconds = validate?.endedAt
      ? secondsBetween(ms(validate.startedAt), ms(validate.endedAt))
      : 0;
    const upToTeardown = input.complete && teardown !== undefined;
    span(
      upToTeardown ? 'last checkpoint → cluster delete requested' : 'last checkpoint → archive started',
      from,
      end,
      validationSeconds,
      `from checkpoint step ${checkpoint.step} written (its files' newest mtime) to ${upToTeardown ? 'the teardown stage' : 'the archive stage'}, less ${validationSeconds.toFixed(1)} s of validation`,
    );
    if (!upToTeardown)
      unknown.push(
        'the manifest is written during the archive stage, so it ends there: archive (checkpoint hashing, which can be long) and the wait for the cluster delete are not in it; the workflow’s result has them (report <workflow id> against the server)',
      );
  } else if (!checkpoint) {
    unknown.push(
      input.checkpoints.length
        ? 'the checkpoint records carry no file mtimes (older manifests): the end gap cannot be measured'
        : 'no checkpoint in the records: the end gap cannot be measured',
    );
  }
  return { origin: new Date(origin).toISOString(), total: rel(last), bars, idle, gpus, unknown };
}

/** The chart's idle GPU spans, and what the records could not measure, as the report's two tables. */
export function idleTables(gantt: Gantt, idleTitle: string): TableModel[] {
  return [
    {
      title: idleTitle,
      header: ['span', 'seconds', 'GPU-seconds', 'how'],
      rows: gantt.idle.map((s) => [s.label, fmtSeconds(s.seconds), fmtNumber(s.gpuSeconds, 6), s.note]),
    },
    { title: 'Not measurable from these records', header: ['what'], rows: gantt.unknown.map((u) => [u]) },
  ];
}
