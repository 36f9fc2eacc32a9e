import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Activities } from '../../src/activities/index.js';
import { stepOfCheckpointPath } from '../../src/domain/campaign/campaign.js';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { checkpointPath } from '../../src/domain/spec/paths.js';
import type { StepGate } from './step-gate.js';

/**
 * Stand-in storage and trainer for campaign workflow tests (time-skipping server): `train` walks
 * steps, "saves" every saveFreq into an in-memory checkpoint list, signals progress to its workflow
 * like the real activity, and fails where the test says; `latestCompleteCheckpoint` answers from the
 * list. With a `gate`, each step waits until the test has released it (a pause, an extend or a cancel
 * then lands at the step the test chose, however busy the machine); without one, the steps run at
 * once. The real activities are exercised by the fault-injection suite.
 */
export function fakeCampaignWorld(
  client: () => Client,
  opts: {
    failAt?: (attempt: number, step: number) => boolean;
    /** The failure's type at failAt (default TrainingFailed; ClusterPreempted: Kueue took the cluster). */
    failType?: string;
    gate?: StepGate;
  } = {},
) {
  const saved = new Set<number>();
  const trains: { workflowId: string; resumeFrom?: string; checkpointDir: string; total: number }[] = [];
  const campaignManifests: Parameters<Activities['archiveCampaign']>[0][] = [];
  const overrides: Partial<Activities> = {
    train: async ({ spec, resume, checkpointDir }) => {
      const ctx = Context.current();
      const workflowId = ctx.info.workflowExecution?.workflowId ?? '';
      trains.push({
        workflowId,
        resumeFrom: resume.mode === 'resume_path' ? resume.path : undefined,
        checkpointDir,
        total: spec.trainer.totalTrainingSteps,
      });
      const attempt = trains.length;
      let step = resume.mode === 'resume_path' ? stepOfCheckpointPath(resume.path) : 0;
      while (step < spec.trainer.totalTrainingSteps) {
        await opts.gate?.enter(step + 1);
        step++;
        if (step % spec.trainer.saveFreq === 0 || step === spec.trainer.totalTrainingSteps) saved.add(step);
        await client()
          .workflow.getHandle(workflowId)
          .signal('progress', {
            step,
            lastCheckpointStep: Math.max(0, ...[...saved].filter((s) => s <= step)),
          });
        if (opts.failAt?.(attempt, step)) {
          throw ApplicationFailure.create({
            type: opts.failType ?? ErrorTypes.TrainingFailed,
            message: `stand-in trainer exited 1 at step ${step}`,
            nonRetryable: true,
          });
        }
        ctx.heartbeat();
      }
      return { finalStep: step, lastCheckpointStep: step, lastMetrics: {}, entrypoint: [] };
    },
    latestCompleteCheckpoint: async ({ checkpointDir }) => {
      const steps = [...saved].sort((a, b) => a - b);
      const top = steps.at(-1);
      return {
        latest:
          top === undefined
            ? undefined
            : { step: top, path: checkpointPath(checkpointDir, top), sha256: `sha-${top}` },
        checkpoints: steps.map((step) => ({ step, sha256: `sha-${step}` })),
        untrusted: [],
      };
    },
    archiveCampaign: async (input) => {
      campaignManifests.push(input);
      return { manifestPath: `/fake/${input.draft.campaign}/campaign.json`, sha256: 'c'.repeat(64) };
    },
  };
  return { overrides, saved, trains, campaignManifests };
}
