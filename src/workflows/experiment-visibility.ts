import { setCurrentDetails } from '@temporalio/workflow';
import { workerGpus } from '../domain/spec/experiment.js';
import { gpuUsageOfStages } from '../domain/usage/gpu-usage.js';
import { manifestPath } from '../domain/spec/paths.js';
import type { StageName } from '../domain/run/results.js';
import type { ExperimentRun, RunVisibility } from './experiment-run.js';
import { SearchAttributes as K, type VisibleStage } from './search-attributes.js';
import { ChangingAttributes } from './visibility.js';

/**
 * The phase an experiment's `RagenStage` shows for a stage. A teardown between resubmits stays in
 * `cluster`; only the teardown at the end is `finish`.
 */
export function visibleStageOf(stage: StageName | 'done', current: VisibleStage): VisibleStage {
  switch (stage) {
    case 'preflight':
    case 'verify':
      return 'preflight';
    case 'submit':
    case 'queued':
    case 'join':
      return 'cluster';
    case 'train':
    case 'validate':
    case 'done':
      return stage;
    case 'archive':
      return 'finish';
    case 'teardown':
      return current === 'cluster' ? 'cluster' : 'finish';
  }
}

/** The current details the Temporal UI shows (markdown): stage, step, checkpoint, manifest. */
export function experimentDetails(run: ExperimentRun): string {
  const { status, input } = run;
  const total = input.spec.trainer.totalTrainingSteps;
  const manifest =
    run.archive.manifestPath ??
    manifestPath(input.spec.storage.archiveDir, input.spec.name, run.ids.workflowId);
  const lines = [
    `**stage** ${status.stage} (cluster attempt ${status.attempt})` +
      (run.outcome && status.stage === 'done' ? ` · **outcome** ${run.outcome}` : ''),
    `**step** ${status.lastStep} / ${total} · **last checkpoint** ${status.lastCheckpointStep || 'none'}`,
  ];
  if (run.validationResult) lines.push(`**validation success** ${run.validationResult.success_rate}`);
  lines.push(`**manifest** ${manifest}${run.archive.manifestPath ? '' : ' (written when the run ends)'}`);
  return lines.join('\n\n');
}

/**
 * Search attributes and current details of one experiment. Stage, outcome, validation success and
 * checkpoint step are upserted when they change, each upsert batched with the command after it;
 * details cost no history event (the UI reads them through a query).
 */
export class ExperimentVisibility implements RunVisibility {
  private readonly attrs = new ChangingAttributes();
  private stage: VisibleStage = 'preflight';

  constructor(private readonly run: ExperimentRun) {
    this.details();
  }

  /** Called as a stage starts, before its first command. */
  stageStarted(stage: StageName | 'done'): void {
    this.stage = visibleStageOf(stage, this.stage);
    this.attrs.set(K.stage, this.stage);
    if (stage === 'done' && this.run.outcome) this.attrs.set(K.outcome, this.run.outcome);
    if (stage === 'done') {
      const { stages, input } = this.run;
      const last = stages.at(-1);
      const usage = gpuUsageOfStages(stages, workerGpus(input.spec), last?.endedAt ?? last?.startedAt ?? '');
      this.attrs.set(K.gpuSeconds, usage.allocatedSeconds);
    }
    if (this.run.validationResult)
      this.attrs.set(K.validationSuccess, this.run.validationResult.success_rate);
    this.attrs.flush();
    this.details();
  }

  /** A progress signal: a new checkpoint is upserted (this signal's workflow task has no other command). */
  progressed(newCheckpoint: boolean): void {
    const { lastCheckpointStep } = this.run.status;
    if (newCheckpoint) {
      this.attrs.set(K.checkpointStep, lastCheckpointStep);
      // The last checkpoint comes just before the train activity ends: the next stage's upsert carries it.
      if (lastCheckpointStep < this.run.input.spec.trainer.totalTrainingSteps) this.attrs.flush();
    }
    this.details();
  }

  details(): void {
    setCurrentDetails(experimentDetails(this.run));
  }
}
