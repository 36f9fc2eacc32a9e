import type { ExperimentSpec } from '../spec/experiment.js';
import { shortHash } from '../spec/naming.js';

/** Who a run belongs to, as the experiment workflow knows it. */
export interface WandbIds {
  workflowId: string;
  /** Set for a campaign's attempt: every attempt continues the campaign's one W&B run. */
  campaignId?: string;
  /** Set for a sweep's child: the sweep id groups the children. */
  sweepId?: string;
}

/** W&B run ids are short and plain: other characters become `-`, a long id keeps a hash of the whole. */
export function wandbRunId(id: string): string {
  const plain = id.replace(/[^A-Za-z0-9_-]/g, '-');
  return plain.length <= 64 ? plain : `${plain.slice(0, 55)}-${shortHash(id)}`;
}

/**
 * The job's W&B environment when `trainer.loggers` includes `wandb` (else none): WANDB_RUN_ID (the
 * campaign id for a campaign's attempts, so they continue one run; the workflow id otherwise) with
 * WANDB_RESUME=allow, WANDB_RUN_GROUP (the sweep id), WANDB_PROJECT/ENTITY/MODE from
 * `tracking.wandb`. No key: the train activity adds WANDB_API_KEY from the worker's environment on
 * the local backend; on kuberay it comes from a Secret (`kuberay.head.env`), never from the spec.
 */
export function wandbJobEnv(spec: ExperimentSpec, ids: WandbIds): Record<string, string> {
  if (!spec.trainer.loggers.includes('wandb')) return {};
  const w = spec.tracking?.wandb;
  const env: Record<string, string> = {
    WANDB_RUN_ID: wandbRunId(ids.campaignId ?? ids.workflowId),
    WANDB_RESUME: 'allow',
  };
  if (ids.sweepId) env.WANDB_RUN_GROUP = ids.sweepId;
  if (w?.project) env.WANDB_PROJECT = w.project;
  if (w?.entity) env.WANDB_ENTITY = w.entity;
  if (w?.mode) env.WANDB_MODE = w.mode;
  return env;
}
