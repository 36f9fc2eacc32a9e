import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { OrchestratorConfig } from '../config.js';
import { resolveProvenance } from '../provenance/git.js';
import { loadSweepSpec } from '../spec/load-sweep.js';
import type { SweepInput, SweepResult, SweepStatus } from '../spec/sweep.js';
import { rankedTable } from '../spec/sweep-results.js';
import type { sweep } from '../workflows/sweep.js';
import { sweepStatusQuery } from '../workflows/sweep-definitions.js';
import { withClient } from './client.js';
import { printOutcome } from './outcome.js';

/** Validate a sweep spec (every child's spec too) and resolve provenance: bad input stops here. */
export async function prepareSweep(specPath: string): Promise<SweepInput> {
  const spec = await loadSweepSpec(specPath);
  return { sweep: spec, provenance: await resolveProvenance(spec.base) };
}

/** One progress line: running, done, failed, best so far. */
export function sweepStatusLine(s: SweepStatus): string {
  const done = s.succeeded + s.failed + s.cancelled;
  const best = s.best ? `best=${s.best.value} (#${s.best.index})` : 'best=-';
  return `running=${s.running} done=${done}/${s.total} succeeded=${s.succeeded} failed=${s.failed}${s.cancelled ? ` cancelled=${s.cancelled}` : ''} ${best}${s.stoppedByFailureBudget ? ' (failure budget spent: no new starts)' : ''}`;
}

/** Print the progress line whenever it changes, until the sweep closes. */
async function followSweep(handle: WorkflowHandle, intervalMs = 2000): Promise<void> {
  let last = '';
  for (;;) {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING' && status.name !== 'CONTINUED_AS_NEW') return;
    try {
      const line = sweepStatusLine(await handle.query(sweepStatusQuery));
      if (line !== last) console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);
      last = line;
    } catch {
      // the first workflow task of a run may not have run yet
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function printSweepResult(r: SweepResult): void {
  console.log(rankedTable(r.ranked));
  console.log(`children: ${r.total} (${r.succeeded} succeeded, ${r.failed} failed, ${r.cancelled} cancelled, ${r.notStarted} not started)${r.stoppedByFailureBudget ? ' — stopped by the failure budget' : ''}`);
  console.log(`sweep manifest: ${r.manifestPath ?? '-'}`);
  console.log(`sweep table:    ${r.csvPath ?? '-'}`);
}

/** `sweep <spec>`: start the sweep, show progress, print the ranked table at the end. */
export async function sweepCommand(config: OrchestratorConfig, input: SweepInput): Promise<number> {
  return withClient(config, async (client) => {
    const workflowId = `sweep-${input.sweep.name}-${randomUUID().slice(0, 8)}`;
    const handle = await client.workflow.start<typeof sweep>('sweep', { taskQueue: config.RAGEN_TASK_QUEUE, workflowId, args: [input] });
    console.log(`started ${workflowId} (run ${handle.firstExecutionRunId})`);
    // The id without a run id follows the sweep across continue-as-new.
    await followSweep(client.workflow.getHandle(workflowId));
    return printOutcome('sweep', workflowId, client.workflow.getHandle<typeof sweep>(workflowId).result(), printSweepResult);
  });
}
