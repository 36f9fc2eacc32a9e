import { setTimeout as sleep } from 'node:timers/promises';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import type { OrchestratorConfig } from '../config/config.js';
import type { ExperimentSpec } from '../domain/spec/experiment.js';
import { runArchiveDir } from '../domain/spec/paths.js';
import { withClient } from './client.js';
import { UserError } from '../config/user-errors.js';

const FOLLOW_INTERVAL_MS = 1_000;

/** One training log copy to print: its attempt (campaigns) and cluster. */
interface LogSource {
  path: string;
  heading: string;
}

/**
 * `logs <workflow id> [-f]`: the training job's driver log, from the copy the train activity keeps
 * next to the manifest (`<archiveDir>/<name>/<workflow id>/train-<cluster>.log`, one per cluster),
 * so it works after teardown. A campaign prints its attempts in order (child `<id>-a<n>`), each
 * headed by its attempt and cluster. `-f` prints what is added until the workflow closes.
 */
export async function logsCommand(
  config: OrchestratorConfig,
  workflowId: string,
  follow: boolean,
): Promise<number> {
  return withClient(config, (client) =>
    printTrainingLogs(client, config.temporal.namespace, workflowId, follow, writeStdout),
  );
}

type Write = (bytes: string | Buffer) => Promise<void>;
const writeStdout: Write = (bytes) => new Promise<void>((r) => process.stdout.write(bytes, () => r()));

/** What `logs` does, on a connected client; `write` takes the output. */
export async function printTrainingLogs(
  client: Client,
  namespace: string,
  workflowId: string,
  follow: boolean,
  write: Write,
  followIntervalMs = FOLLOW_INTERVAL_MS,
): Promise<number> {
  const handle = client.workflow.getHandle(workflowId);
  const kind = (await handle.describe()).type;
  if (kind !== 'experiment' && kind !== 'campaign')
    throw new UserError(
      `${workflowId} is a ${kind}; it has no training log of its own: give one of its children's ids (see status ${workflowId})`,
      2,
    );
  const spec = await startInputSpec(client, namespace, workflowId);
  const printed = new Map<string, number>();
  for (;;) {
    // Read the state first: what was written before the workflow closed is printed after it.
    const running = follow && (await handle.describe()).status.name === 'RUNNING';
    const sources = await logSources(spec, workflowId, kind);
    for (const source of sources) await printNew(source, printed, write);
    if (!running) {
      if (sources.length === 0)
        console.error(`no training log yet under ${runArchiveDir(spec.storage, spec.name, workflowId)}`);
      return 0;
    }
    await sleep(followIntervalMs);
  }
}

/** The spec the workflow was started with (its first history event; the latest run's, after continue-as-new). */
async function startInputSpec(
  client: Client,
  namespace: string,
  workflowId: string,
): Promise<ExperimentSpec> {
  const history = await client.workflowService.getWorkflowExecutionHistory({
    namespace,
    execution: { workflowId },
    maximumPageSize: 1,
  });
  const payload = history.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const input = payload
    ? client.options.loadedDataConverter.payloadConverter.fromPayload<{ spec?: ExperimentSpec }>(payload)
    : undefined;
  if (!input?.spec) throw new UserError(`${workflowId} was not started with an experiment spec`, 1);
  return input.spec;
}

/** Attempt folders in order (a campaign's children `<id>-a1`, `-a2`, …), each cluster's log in order. */
export async function logSources(
  spec: ExperimentSpec,
  workflowId: string,
  kind: string,
): Promise<LogSource[]> {
  const runs: { dir: string; attempt?: number; id: string }[] = [];
  if (kind === 'experiment')
    runs.push({ dir: runArchiveDir(spec.storage, spec.name, workflowId), id: workflowId });
  else
    for (let n = 1; ; n++) {
      const id = `${workflowId}-a${n}`;
      const dir = runArchiveDir(spec.storage, spec.name, id);
      if (!(await stat(dir).catch(() => undefined))) break;
      runs.push({ dir, attempt: n, id });
    }
  const sources: LogSource[] = [];
  for (const run of runs) {
    const names = (await readdir(run.dir).catch(() => [] as string[]))
      .filter((f) => /^train-.+\.log$/.test(f))
      .sort((a, b) => clusterOrder(a) - clusterOrder(b) || a.localeCompare(b));
    for (const name of names) {
      const cluster = name.replace(/^train-/, '').replace(/(\.\d+)?\.log$/, '');
      sources.push({
        path: join(run.dir, name),
        heading:
          run.attempt === undefined
            ? `== cluster ${cluster} ==`
            : `== attempt ${run.attempt} (${run.id}), cluster ${cluster} ==`,
      });
    }
  }
  return sources;
}

/** Cluster names end in `-a<n>`, the cluster attempt (a resubmit makes the next). */
const clusterOrder = (file: string) => Number(/-a(\d+)(\.\d+)?\.log$/.exec(file)?.[1] ?? 0);

async function printNew(source: LogSource, printed: Map<string, number>, write: Write): Promise<void> {
  const from = printed.get(source.path);
  const size = (await stat(source.path)).size;
  if (from === undefined) await write(`${source.heading}\n`);
  const start = from ?? 0;
  if (size > start) {
    const file = await open(source.path, 'r');
    try {
      // In pieces: a copy may be gigabytes.
      for (let at = start; at < size;) {
        const buf = Buffer.alloc(Math.min(8 << 20, size - at));
        const { bytesRead } = await file.read(buf, 0, buf.length, at);
        if (bytesRead === 0) break;
        await write(buf.subarray(0, bytesRead));
        at += bytesRead;
      }
    } finally {
      await file.close();
    }
  }
  printed.set(source.path, Math.max(size, start));
}
