import type { WorkflowHandle } from '@temporalio/client';
import type { ExperimentSpec } from '../spec/experiment.js';
import type { ExperimentStatus } from '../spec/experiment-input.js';
import { statusQuery } from '../workflows/definitions.js';

/** One status line: stage, joined workers, step and last checkpoint. */
export function statusLine(s: ExperimentStatus, spec?: ExperimentSpec): string {
  const workers = spec ? `/${spec.cluster.workerGroups.reduce((n, g) => n + g.replicas, 0)}` : '';
  const steps = spec ? `/${spec.trainer.totalTrainingSteps}` : '';
  return `stage=${s.stage} attempt=${s.attempt} workers=${s.joinedWorkers}${workers} gpus=${s.gpusRegistered} step=${s.lastStep}${steps} checkpoint=${s.lastCheckpointStep}`;
}

/** Print the status line whenever it changes until the workflow closes. */
export async function watchUntilClosed(handle: WorkflowHandle, spec?: ExperimentSpec, intervalMs = 1000): Promise<void> {
  let last = '';
  for (;;) {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return;
    try {
      const status = await handle.query(statusQuery);
      const line = status.kind === 'experiment' ? statusLine(status, spec) : '';
      if (line !== last) console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
      last = line;
    } catch {
      // the first workflow task may not have run yet
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
