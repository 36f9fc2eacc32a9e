import { randomUUID } from 'node:crypto';
import type { OrchestratorConfig } from '../config/config.js';
import { resolveProvenance } from '../provenance/git.js';
import { checkShippedCode } from './spec-files/code-check.js';
import { loadSweepSpec } from './spec-files/load-sweep.js';
import type { SweepInput, SweepResult } from '../domain/sweep/sweep.js';
import { rankedTable } from './ranked-table.js';
import type { sweep } from '../workflows/sweep.js';
import { setSweepLimitsUpdate, sweepStatusQuery } from '../workflows/sweep-definitions.js';
import { withClient } from './client.js';
import { checkLocalStorageWritable } from './spec-files/local-storage-check.js';
import { startOrExplain } from './start-failures.js';
import { follow } from './follow.js';
import { printOutcome } from './outcome.js';
import { sweepStart } from './start-options.js';
import { type Who, owned } from './owned.js';
import { sweepView } from './views.js';

/** Validate a sweep spec (every child's spec too) and resolve provenance: bad input stops here. */
export async function prepareSweep(specPath: string, who: Who = {}): Promise<SweepInput> {
  const loaded = await loadSweepSpec(specPath);
  const spec = { ...loaded, base: owned(loaded.base, who) };
  await checkShippedCode(spec.base, specPath, 'base.');
  await checkLocalStorageWritable(spec.base, specPath);
  return { sweep: spec, provenance: await resolveProvenance(spec.base) };
}

export function printSweepResult(r: SweepResult): void {
  console.log(rankedTable(r.ranked));
  console.log(
    `children: ${r.total} (${r.succeeded} succeeded, ${r.failed} failed, ${r.cancelled} cancelled, ${r.notStarted} not started)${r.stoppedByFailureBudget ? ' — stopped by the failure budget' : ''}`,
  );
  console.log(`sweep manifest: ${r.manifestPath ?? '-'}`);
  console.log(`sweep table:    ${r.csvPath ?? '-'}`);
}

/** `sweep <spec>`: start the sweep, show progress, print the ranked table at the end. */
export async function sweepCommand(config: OrchestratorConfig, input: SweepInput): Promise<number> {
  return withClient(config, async (client) => {
    const workflowId = `sweep-${input.sweep.name}-${randomUUID().slice(0, 8)}`;
    const handle = await startOrExplain(client, config.temporal, () =>
      client.workflow.start<typeof sweep>('sweep', {
        taskQueue: config.RAGEN_TASK_QUEUE,
        workflowId,
        args: [input],
        ...sweepStart(input.sweep, workflowId),
      }),
    );
    console.log(`started ${workflowId} (run ${handle.firstExecutionRunId})`);
    // The id without a run id follows the sweep across continue-as-new.
    const latest = client.workflow.getHandle(workflowId);
    await follow(latest, async () => sweepView(await latest.query(sweepStatusQuery)), { intervalMs: 2000 });
    return printOutcome(
      'sweep',
      workflowId,
      client.workflow.getHandle<typeof sweep>(workflowId).result(),
      printSweepResult,
    );
  });
}

/** `sweep set <id>`: the sweep validates the change (a refusal exits 1 with its reason) and answers its status. */
export async function sweepSetCommand(
  config: OrchestratorConfig,
  workflowId: string,
  limits: { concurrency?: number; failureBudget?: number },
): Promise<number> {
  return withClient(config, async (client) => {
    const status = await client.workflow.getHandle(workflowId).executeUpdate(setSweepLimitsUpdate, {
      args: [{ concurrency: limits.concurrency, failureBudget: limits.failureBudget }],
    });
    console.log(
      `${workflowId}: concurrency ${status.concurrency ?? '?'}, failure budget ${status.failureBudget ?? 'none'}; ${sweepView(status).line}`,
    );
    return 0;
  });
}
