import type { CampaignProgress } from '../domain/campaign/campaign.js';
import type { ExperimentSpec } from '../domain/spec/experiment.js';
import type { ExperimentStatus } from '../domain/run/experiment-input.js';
import type { SweepStatus } from '../domain/sweep/sweep.js';
import type { WorkflowStatus } from '../domain/run/workflow-status.js';
import type { FollowView } from './follow.js';

/** An experiment: stage, joined workers, step and last checkpoint; the bar counts training steps. */
export function experimentView(s: ExperimentStatus, spec?: ExperimentSpec): FollowView {
  const workers = spec ? `/${spec.cluster.workerGroups.reduce((n, g) => n + g.replicas, 0)}` : '';
  const total = spec?.trainer.totalTrainingSteps;
  return {
    line: `stage=${s.stage} attempt=${s.attempt} workers=${s.joinedWorkers}${workers} gpus=${s.gpusRegistered} step=${s.lastStep}${total ? `/${total}` : ''} checkpoint=${s.lastCheckpointStep}`,
    done: s.lastStep,
    total,
  };
}

/** A campaign: phase, attempt, step, checkpoint and GPU-seconds; the bar counts steps. */
export function campaignView(p: CampaignProgress): FollowView {
  return {
    line: `phase=${p.phase} attempt=${p.attempt} step=${p.step}/${p.totalTrainingSteps} checkpoint=${p.lastCheckpointStep} gpu-seconds=${p.gpuSeconds.toFixed(0)}${p.paused ? ' (paused)' : ''}`,
    done: p.step,
    total: p.totalTrainingSteps,
  };
}

/** A sweep: running, done, failed, best so far; the bar counts finished children. */
export function sweepView(s: SweepStatus): FollowView {
  const done = s.succeeded + s.failed + s.cancelled + (s.pruned ?? 0);
  const best = s.best ? `best=${s.best.value} (#${s.best.index})` : 'best=-';
  return {
    line: `running=${s.running} done=${done}/${s.total} succeeded=${s.succeeded} failed=${s.failed}${s.cancelled ? ` cancelled=${s.cancelled}` : ''}${s.pruned ? ` pruned=${s.pruned}` : ''} ${best}${s.stoppedByFailureBudget ? ' (failure budget spent: no new starts)' : ''}`,
    done,
    total: s.total,
  };
}

/** The answer of the `status` query that every workflow kind gives, by its `kind`. */
export function statusView(s: WorkflowStatus, spec?: ExperimentSpec): FollowView {
  if (s.kind === 'campaign') return campaignView(s);
  if (s.kind === 'sweep') return sweepView(s);
  return experimentView(s, spec);
}
