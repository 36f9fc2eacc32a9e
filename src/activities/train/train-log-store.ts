import { mkdir, open, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { MetricsSeriesSchema, MetricsSummarySchema } from '../../domain/train/metrics-series.js';
import {
  metricsSeriesPath,
  metricsSummaryPath,
  trainLogPath,
  trainLogStatePath,
} from '../../domain/spec/paths.js';
import { writingToArchive } from './archive-disk-full.js';
import { emptyTrainLogState, feedTrainLog, type TrainLogState } from './train-log.js';

interface SavedState {
  /** Bytes of the log copy that `state` covers; a retry parses only the copy's bytes after them. */
  logBytes: number;
  state: TrainLogState;
}

/** Bytes of a log copy re-parsed at most after a restart (the copy since the last save). */
const MAX_REPARSE_BYTES = 256 * 1024 * 1024;

/**
 * The train activity's files in the run's archive folder: the driver log copy
 * (`train-<cluster>.log`), its parse state (`train-<cluster>.state.json`), and the run's metrics
 * series and summary (`metrics-series.json`, `metrics-summary.json`). The state file is written
 * before the copy exists, so a copy without one is not ours: it is left alone and a new name used.
 */
export class TrainLogStore {
  private constructor(
    readonly runDir: string,
    readonly logPath: string,
    readonly state: TrainLogState,
  ) {}

  static async open(runDir: string, clusterName: string): Promise<TrainLogStore> {
    await mkdir(runDir, { recursive: true });
    for (let copy = 0; ; copy++) {
      const logPath = trainLogPath(runDir, clusterName, copy);
      const saved = await readJson<SavedState>(trainLogStatePath(logPath));
      if (saved) return new TrainLogStore(runDir, logPath, await catchUp(saved, logPath));
      if (await exists(logPath)) continue; // someone else's file: never appended to
      const state = emptyTrainLogState();
      // A run's earlier cluster (a resubmit) may have started the series: continue it.
      const series = MetricsSeriesSchema.safeParse(await readJson(metricsSeriesPath(runDir)));
      const summary = MetricsSummarySchema.safeParse(await readJson(metricsSummaryPath(runDir)));
      if (series.success) state.series = series.data;
      if (summary.success) state.summary = summary.data;
      const store = new TrainLogStore(runDir, logPath, state);
      await store.save(0);
      return store;
    }
  }

  /** Save the parse state (covering `logBytes` of the copy), the series and the summary. */
  async save(logBytes: number): Promise<void> {
    const saved: SavedState = { logBytes, state: this.state };
    await replace(trainLogStatePath(this.logPath), JSON.stringify(saved));
    await replace(metricsSeriesPath(this.runDir), JSON.stringify(this.state.series));
    await replace(metricsSummaryPath(this.runDir), JSON.stringify(this.state.summary, null, 1));
  }
}

/** The saved state plus the copy's lines written after it was saved. */
async function catchUp(saved: SavedState, logPath: string): Promise<TrainLogState> {
  const size = await stat(logPath).then(
    (s) => s.size,
    () => 0,
  );
  const from = Math.max(saved.logBytes, size - MAX_REPARSE_BYTES);
  if (size > from) {
    const file = await open(logPath, 'r');
    try {
      const buf = Buffer.alloc(size - from);
      await file.read(buf, 0, buf.length, from);
      const text = buf.toString('utf8');
      // Past the cap, start at a whole line.
      feedTrainLog(saved.state, from > saved.logBytes ? text.slice(text.indexOf('\n') + 1) : text);
    } finally {
      await file.close();
    }
  }
  return saved.state;
}

async function readJson<T = unknown>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Write by rename, so a reader (report, logs) never sees half a file. */
async function replace(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  await writingToArchive(tmp, () => writeFile(tmp, text));
  await rename(tmp, path);
}
