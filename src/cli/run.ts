import { randomUUID } from 'node:crypto';
import type { OrchestratorConfig } from '../config/config.js';
import { resolveProvenance } from '../provenance/git.js';
import { checkShippedCode } from './spec-files/code-check.js';
import type { ExperimentInput, ExperimentResult } from '../domain/run/experiment-input.js';
import { loadExperimentSpec } from './spec-files/load.js';
import type { experiment } from '../workflows/experiment.js';
import { withClient } from './client.js';
import { checkLocalStorageWritable } from './spec-files/local-storage-check.js';
import { startOrExplain } from './start-failures.js';
import { follow } from './follow.js';
import { statusView } from './views.js';
import { liveStatus } from './live-status.js';
import { printOutcome } from './outcome.js';
import { experimentStart } from './start-options.js';
import { type Who, owned } from './owned.js';

/**
 * `run <spec>`: validate the spec and provenance (bad input stops here, before anything starts),
 * start the experiment workflow, show stage and step live, print the manifest path and success.
 */
export async function prepareRun(specPath: string, who: Who = {}): Promise<ExperimentInput> {
  const spec = owned(await loadExperimentSpec(specPath), who);
  await checkShippedCode(spec, specPath);
  await checkLocalStorageWritable(spec, specPath);
  return { spec, provenance: await resolveProvenance(spec) };
}

export async function runCommand(config: OrchestratorConfig, input: ExperimentInput): Promise<number> {
  const { spec } = input;
  return withClient(config, async (client) => {
    const workflowId = `experiment-${spec.name}-${randomUUID().slice(0, 8)}`;
    const handle = await startOrExplain(client, config.temporal, () =>
      client.workflow.start<typeof experiment>('experiment', {
        taskQueue: config.RAGEN_TASK_QUEUE,
        workflowId,
        args: [input],
        ...experimentStart(spec),
      }),
    );
    console.log(`started ${workflowId} (run ${handle.firstExecutionRunId})`);
    await follow(handle, async () => statusView(await liveStatus(handle), spec));
    return printOutcome('experiment', workflowId, handle.result(), printResult);
  });
}

export function printResult(r: ExperimentResult): void {
  console.log(`outcome: ${r.outcome}`);
  console.log(
    `training: ${r.training.outcome}${r.training.finalStep !== undefined ? ` (step ${r.training.finalStep})` : ''}${r.training.error ? ` — ${r.training.error.split('\n')[0]}` : ''}`,
  );
  console.log(`validation success: ${r.validation.successRate ?? '-'} (${r.validation.outcome})`);
  console.log(
    `manifest: ${r.archive.manifestPath ?? `(${r.archive.outcome}${r.archive.error ? `: ${r.archive.error}` : ''})`}`,
  );
  console.log(`teardown: ${r.teardown.outcome}`);
  for (const s of r.stages) {
    const ms = s.endedAt ? Date.parse(s.endedAt) - Date.parse(s.startedAt) : NaN;
    console.log(
      `  ${s.stage.padEnd(9)} attempt ${s.attempt} ${s.outcome ?? '?'} ${Number.isNaN(ms) ? '' : `${(ms / 1000).toFixed(1)} s`}`,
    );
  }
}
