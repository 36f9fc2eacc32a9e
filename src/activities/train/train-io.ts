import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import type { ResumeFrom } from '../../domain/ragen/entrypoint.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import type { WandbIds } from '../../domain/tracking/wandb-env.js';

/** What the train activity takes and returns (its session shares them). */
export interface TrainInput {
  spec: ExperimentSpec;
  handle: ClusterHandle;
  checkpointDir: string;
  resume: ResumeFrom;
  /** Whose W&B run this is (when trainer.loggers includes wandb): see wandbJobEnv. */
  wandb?: WandbIds;
  /** Signal the workflow once per in-loop validation with its `val-env/...` metrics (a sweep's scheduler). */
  reportValidations?: boolean;
  /** Only the first validation at or past each of these steps (ASHA's rungs); absent = all. */
  reportSteps?: number[];
}

export interface TrainResult {
  finalStep: number;
  lastCheckpointStep: number;
  lastMetrics: Record<string, number>;
  entrypoint: string[];
  /** RAGEN stopped on its own (exit 0, `early_stopped/*` metrics): the reasons, e.g. `low_validation_success`. */
  earlyStopped?: { step: number; reasons: string[] };
}
