import { z } from 'zod';
import { ALLREDUCE_SECONDS_DEFAULT, ChecksSchema } from '../join/checks.js';
import { CodeSchema } from '../code/code.js';
import { CostSchema } from '../usage/gpu-usage.js';
import { ImageRefSchema } from './image.js';
import { ImageContractSchema } from '../join/image-contract.js';
import { ModelSchema } from '../model/model.js';
import { ObjectStoreSchema } from '../object-store/object-store.js';
import { type Retain, RetainSchema } from '../checkpoints/retention.js';
import { KubeRaySchema, kuberayIssues } from '../cluster/kuberay.js';
import { RayAuthSchema } from '../cluster/ray-auth.js';
import { NotifyTargetSchema, TrackingSchema } from '../tracking/tracking.js';

export { KubeRaySchema, type KubeRaySettings } from '../cluster/kuberay.js';

/** A path that must be absolute: checkpoints and manifests live on storage every node sees at one path. */
const AbsolutePath = z.string().refine((p) => p.startsWith('/'), {
  message: 'must be an absolute path (every Ray node resolves it the same way); write it starting with /',
});

const PositiveInt = z.number().int().positive();
const GitCommit = z.string().regex(/^[0-9a-f]{40}$/, 'must be a full 40-hex git commit');

export const WorkerGroupSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and -'),
  replicas: PositiveInt,
  gpusPerWorker: z.number().int().min(0),
  cpusPerWorker: z.number().positive().default(1),
});

export const ClusterShapeSchema = z.strictObject({
  head: z.strictObject({ cpus: z.number().positive().default(1) }).default({ cpus: 1 }),
  workerGroups: z.array(WorkerGroupSchema).min(1, 'at least one worker group is needed'),
});

/** Metric backends verl 0.6 knows (contract §1.5); `file` writes JSONL to $VERL_FILE_LOGGER_PATH. */
export const VERL_LOGGERS = [
  'console',
  'file',
  'wandb',
  'mlflow',
  'swanlab',
  'vemlp_wandb',
  'tensorboard',
  'clearml',
  'trackio',
] as const;

/** RAGEN/verl trainer settings the orchestrator owns; anything else goes through `overrides`. */
export const TrainerSchema = z.strictObject({
  /**
   * argv before the overrides. Default by backend (see defaultEntrypoint): kuberay runs RAGEN's
   * `python train.py` in the image's working directory; local runs the toy payload.
   */
  entrypoint: z.array(z.string().min(1)).min(1).optional(),
  /** The Python that replaces a leading `python` in the entrypoint (kuberay: on the image's PATH; local: the venv's). */
  interpreter: z.string().min(1).optional(),
  /** verl metric backends (`trainer.logger`): console is what the orchestrator reads; verl < 0.4 refuses `file`. */
  loggers: z.array(z.enum(VERL_LOGGERS)).min(1).default(['console']),
  configName: z.string().default('_2_sokoban'),
  nnodes: PositiveInt,
  nGpusPerNode: PositiveInt,
  totalTrainingSteps: PositiveInt,
  /**
   * verl's trainer.save_freq: a save every saveFreq steps, and one at the last step. `final` is one
   * save at the end (save_freq = totalTrainingSteps); more than totalTrainingSteps is refused.
   */
  saveFreq: z.union([PositiveInt, z.literal('final')]),
  testFreq: z.number().int().min(0).default(0),
  seedTrain: z.number().int().min(0).default(10000),
  /**
   * The RAGEN commit the image carries (7-40 hex digits), when known: the load-time checks then
   * use that revision's facts (its env tags, its model_path rule; src/domain/ragen/ragen-revisions.ts).
   */
  ragenRevision: z
    .string()
    .regex(/^[0-9a-fA-F]{7,40}$/, 'a RAGEN git commit, 7 to 40 hex digits, such as 20daedc')
    .optional(),
  /** Extra `key=value` overrides passed verbatim as separate arguments (never through a shell). */
  overrides: z
    .record(
      z.string().regex(/^\+?[A-Za-z_][\w.@-]*$/, 'an override key like algorithm.lr'),
      z.union([z.string(), z.number(), z.boolean()]),
    )
    .default({}),
});

export const StorageSchema = z.strictObject({
  /** Root of `trainer.default_local_dir`; each run gets `<checkpointDir>/<name>/<workflow id>`. */
  checkpointDir: AbsolutePath,
  /** Manifests go to `<archiveDir>/<name>/<workflow id>/manifest.json`. */
  archiveDir: AbsolutePath,
  /** Size of one checkpoint (actor + critic, all ranks), for preflight's free-space warning. */
  checkpointSizeGb: z.number().positive().optional(),
  /**
   * Campaigns: which checkpoints to keep (latest N, best K by a metric, every S steps). Absent: all
   * on the local backend; on kuberay kuberayRetainDefault (multi-GB checkpoints); `every: 1` keeps
   * every one there.
   */
  retain: RetainSchema.optional(),
  /**
   * Copies of the archive (manifest, metrics, validation, report) and of the checkpoints `retain`
   * keeps, in S3 (docs/object-storage.md); a campaign resumes from there when its volume lost them.
   */
  objectStore: ObjectStoreSchema.optional(),
});

export const ValidationSchema = z.strictObject({
  /** Validation environments: es_manager.val.env_groups (group_size 1), seeds seed.val + i. */
  episodes: PositiveInt.default(128),
  /** `seed.val`: validation levels are seed.val + i, disjoint from training levels. */
  seed: z.number().int().min(0).default(123),
  /**
   * Who validates: `payload` (`python -m ragen_toy.validate`, only where the toy payload is
   * installed) or `trainer` (the training entrypoint with trainer.val_only=True from the final
   * checkpoint, as on a RAGEN image). Unset: payload on the local backend, trainer on kuberay.
   */
  runner: z.enum(['payload', 'trainer']).optional(),
  /** The RAGEN env tag validated (es_manager.val.env_configs.tags); its metrics are val-env/<tag>/…. */
  envTag: z
    .string()
    .regex(/^[A-Za-z][\w-]*$/, "an env tag from RAGEN's envs.yaml such as CoordSokoban")
    .default('CoordSokoban'),
});

export const ProvenanceSchema = z.strictObject({
  repoCommit: GitCommit.optional(),
  submodules: z.record(z.string(), GitCommit).optional(),
  modelRevision: z.string().min(1).optional(),
});

/** Join deadline when the spec sets none: a kuberay cluster may first pull a large image on every node. */
export const JOIN_SECONDS_DEFAULT = { local: 180, kuberay: 900 } as const;

/**
 * Time between steps when the spec sets none. A real RAGEN step on kuberay (rollouts, update,
 * in-loop validation, a multi-GB checkpoint save) can take many minutes; the local backend runs the
 * toy payload, whose steps take seconds, so a stuck toy run is noticed in 5 minutes.
 */
export const NO_PROGRESS_SECONDS_DEFAULT = { local: 300, kuberay: 1800 } as const;

export const DeadlinesSchema = z.strictObject({
  /** Default by backend: JOIN_SECONDS_DEFAULT. */
  joinSeconds: PositiveInt.optional(),
  runSeconds: PositiveInt.default(6 * 3600),
  /** Between steps, once the first step is logged. Default by backend: NO_PROGRESS_SECONDS_DEFAULT. */
  noProgressSeconds: PositiveInt.optional(),
  /** Until the first training step: model download, worker setup and the initial validation. */
  firstStepSeconds: PositiveInt.default(3600),
});

export const JoinSchema = z.strictObject({
  /** Whole-cluster resubmits after a missed join deadline or a failed all-reduce. */
  maxResubmits: z.number().int().min(0).default(2),
  allReduceSizeMb: z.number().positive().default(4),
  /** Bus bandwidth floor for the all-reduce check; 0 accepts any speed (CPU stand-in). */
  minBusBandwidthGbps: z.number().min(0).default(0),
  /**
   * A node whose best link (the probe's per-node link test) is under this fraction of the median
   * node's is suspect, and the check fails naming it. Default NODE_FLOOR_FRACTION_DEFAULT (absent
   * from specs that predate the link test: nodeFloorFraction() resolves it).
   */
  nodeFloorFraction: z.number().gt(0).lt(1).optional(),
});

export const NODE_FLOOR_FRACTION_DEFAULT = 0.5;

/** The spec's per-node floor, or the default. */
export function nodeFloorFraction(spec: { join: { nodeFloorFraction?: number } }): number {
  return spec.join.nodeFloorFraction ?? NODE_FLOOR_FRACTION_DEFAULT;
}

const isUnder = (path: string, root: string) =>
  path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);

/** Who a run is for: a Kubernetes label value (it labels the cluster's Pods) and a search attribute. */
export const AccountNameSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/,
    "use 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (it labels the cluster's Pods)",
  );

export const ExperimentSpecSchema = z
  .strictObject({
    name: z
      .string()
      .regex(
        /^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/,
        'use 1-40 lowercase letters, digits and - (it names clusters)',
      ),
    backend: z.enum(['local', 'kuberay']).default('local'),
    /** Who runs it and for which team (search attributes RagenOwner/RagenTeam, cluster labels, usage);
     *  the CLI fills them from --owner/--team, else the OS user and team `default`. */
    owner: AccountNameSchema.optional(),
    team: AccountNameSchema.optional(),
    image: ImageRefSchema.optional(),
    /** A local checkout shipped with every job as its working_dir (src/domain/code/code.ts); absent: the image's code. */
    code: CodeSchema.optional(),
    /** What the image must provide, checked on every node right after join (src/domain/join/image-contract.ts). */
    imageContract: ImageContractSchema.optional(),
    /** The model RAGEN loads (`model_path`): a directory on shared storage, or a pinned Hub revision staged there. */
    model: ModelSchema.optional(),
    rayVersion: z.string().regex(/^\d+\.\d+\.\d+$/, 'an exact Ray version such as 2.60.0'),
    /** Ray token authentication: on unless `none` (kuberay, an image with Ray < 2.52); see ray-auth.ts. */
    auth: RayAuthSchema.optional(),
    cluster: ClusterShapeSchema,
    trainer: TrainerSchema,
    storage: StorageSchema,
    validation: ValidationSchema.default({ episodes: 128, seed: 123, envTag: 'CoordSokoban' }),
    provenance: ProvenanceSchema.default({}),
    deadlines: DeadlinesSchema.default({ runSeconds: 6 * 3600, firstStepSeconds: 3600 }),
    join: JoinSchema.default({ maxResubmits: 2, allReduceSizeMb: 4, minBusBandwidthGbps: 0 }),
    checks: ChecksSchema.default({ allReduceSeconds: ALLREDUCE_SECONDS_DEFAULT }),
    kuberay: KubeRaySchema.optional(),
    /** An experiment tracker the run is recorded in after archive (src/domain/tracking/tracking.ts). */
    tracking: TrackingSchema.optional(),
    /** Where a JSON event is posted when the run (campaign, sweep) ends. */
    notify: z.array(NotifyTargetSchema).optional(),
    /** Price of a GPU-hour: the manifests then record the cost next to the GPU-seconds. */
    cost: CostSchema.optional(),
    /**
     * What the run reserves in its team's budget (budgets.yaml on the worker): the stated estimate,
     * else trainer.nnodes x trainer.nGpusPerNode x deadlines.runSeconds (src/domain/budget/budgets.ts).
     */
    budget: z
      .strictObject({
        estimateGpuHours: z
          .number()
          .positive('must be above 0: the GPU-hours the run is expected to allocate')
          .optional(),
      })
      .optional(),
  })
  .superRefine((spec, ctx) => {
    for (const issue of shapeIssues(spec)) ctx.addIssue({ code: 'custom', ...issue });
    const { saveFreq, totalTrainingSteps } = spec.trainer;
    if (saveFreq !== 'final' && saveFreq > totalTrainingSteps) {
      ctx.addIssue({
        code: 'custom',
        path: ['trainer', 'saveFreq'],
        message: `${saveFreq} is more than totalTrainingSteps (${totalTrainingSteps}): no periodic checkpoint would be saved, only the last step's; set saveFreq to at most ${totalTrainingSteps}, or 'final' for one save at the end`,
      });
    }
    if (spec.model && 'model_path' in spec.trainer.overrides) {
      ctx.addIssue({
        code: 'custom',
        path: ['trainer', 'overrides', 'model_path'],
        message: 'model sets model_path (and records its revision); remove this override',
      });
    }
    if (spec.backend === 'kuberay' && !spec.image) {
      ctx.addIssue({
        code: 'custom',
        path: ['image'],
        message: 'the kuberay backend needs an image pinned by digest (registry/repo@sha256:…)',
      });
    }
    if (spec.backend === 'kuberay') {
      if (!spec.kuberay) {
        ctx.addIssue({
          code: 'custom',
          path: ['kuberay'],
          message:
            'the kuberay backend needs kuberay.storage.pvc and kuberay.storage.mountPath (the shared volume every Ray pod mounts)',
        });
      } else {
        const { mountPath, pvc } = spec.kuberay.storage;
        for (const key of ['checkpointDir', 'archiveDir'] as const) {
          if (!isUnder(spec.storage[key], mountPath)) {
            ctx.addIssue({
              code: 'custom',
              path: ['storage', key],
              message: `must be under kuberay.storage.mountPath (${mountPath}): only that volume (PVC ${pvc}) is shared by the Ray pods`,
            });
          }
        }
        for (const key of ['path', 'hfHome'] as const) {
          const dir = spec.model?.[key];
          if (dir?.startsWith('/') && !isUnder(dir, mountPath)) {
            ctx.addIssue({
              code: 'custom',
              path: ['model', key],
              message: `must be under kuberay.storage.mountPath (${mountPath}): every Ray pod reads the model from that volume (PVC ${pvc})`,
            });
          }
        }
        for (const issue of kuberayIssues(spec.kuberay, spec.cluster))
          ctx.addIssue({ code: 'custom', ...issue });
      }
    }
  })
  .transform((spec) => ({
    ...spec,
    trainer: {
      ...spec.trainer,
      saveFreq: spec.trainer.saveFreq === 'final' ? spec.trainer.totalTrainingSteps : spec.trainer.saveFreq,
    },
    storage: withRetainDefault(spec),
    deadlines: {
      ...spec.deadlines,
      joinSeconds: spec.deadlines.joinSeconds ?? JOIN_SECONDS_DEFAULT[spec.backend],
      noProgressSeconds: spec.deadlines.noProgressSeconds ?? NO_PROGRESS_SECONDS_DEFAULT[spec.backend],
    },
  }));

export type ExperimentSpec = z.infer<typeof ExperimentSpecSchema>;

/**
 * A kuberay campaign keeps, when storage.retain is not set, the last 2 checkpoints and, with
 * in-loop validation (testFreq > 0), the best by the validated env's success: a real RAGEN
 * checkpoint is many GB. Without validation there is no metric to rank by (an unranked checkpoint
 * would be kept), so only the last 2. Local runs keep every checkpoint (the toy's are tiny).
 */
export function kuberayRetainDefault(spec: {
  backend: 'local' | 'kuberay';
  trainer: { testFreq: number };
  validation: { envTag: string };
}): Retain | undefined {
  if (spec.backend !== 'kuberay') return undefined;
  if (spec.trainer.testFreq === 0) return { latest: 2 };
  return {
    latest: 2,
    best: { count: 1, metric: `val-env/${spec.validation.envTag}/success`, mode: 'max' },
  };
}

/** The storage section with storage.retain's backend default filled in. */
function withRetainDefault<S extends { storage: { retain?: Retain } }>(
  spec: S & Parameters<typeof kuberayRetainDefault>[0],
): S['storage'] {
  const retain = spec.storage.retain ?? kuberayRetainDefault(spec);
  return retain ? { ...spec.storage, retain } : spec.storage;
}

export type WorkerGroup = z.infer<typeof WorkerGroupSchema>;

/** GPUs that the worker groups provide (the head never has GPUs); takes any spec shape that has the counts (usage reads old inputs loosely). */
export function workerGpus(spec: {
  cluster: { workerGroups: readonly Pick<WorkerGroup, 'replicas' | 'gpusPerWorker'>[] };
}): number {
  return spec.cluster.workerGroups.reduce((sum, g) => sum + g.replicas * g.gpusPerWorker, 0);
}

/** Worker nodes in all groups. */
export function workerNodes(spec: Pick<ExperimentSpec, 'cluster'>): number {
  return spec.cluster.workerGroups.reduce((sum, g) => sum + g.replicas, 0);
}

/**
 * verl places one STRICT_PACK placement group of n_gpus_per_node GPUs per trainer node: the total
 * must match, and so must the per-node shape, or the trainer hangs waiting for placement groups.
 */
export function shapeIssues(spec: {
  cluster: ExperimentSpec['cluster'];
  trainer: Pick<ExperimentSpec['trainer'], 'nnodes' | 'nGpusPerNode'>;
}): { path: (string | number)[]; message: string }[] {
  const { nnodes, nGpusPerNode } = spec.trainer;
  const gpus = workerGpus(spec);
  if (nnodes * nGpusPerNode !== gpus) {
    return [
      {
        path: ['trainer', 'nnodes'],
        message: `trainer.nnodes x trainer.nGpusPerNode = ${nnodes} x ${nGpusPerNode} = ${nnodes * nGpusPerNode}, but the worker groups provide ${gpus} GPUs; make them equal (change the replicas or gpusPerWorker, or nnodes/nGpusPerNode)`,
      },
    ];
  }
  const issues: { path: (string | number)[]; message: string }[] = [];
  spec.cluster.workerGroups.forEach((g, i) => {
    if (g.gpusPerWorker !== 0 && g.gpusPerWorker !== nGpusPerNode) {
      issues.push({
        path: ['cluster', 'workerGroups', i, 'gpusPerWorker'],
        message: `each GPU worker must hold trainer.nGpusPerNode=${nGpusPerNode} GPUs (verl packs one node's GPUs together), but this group has ${g.gpusPerWorker}; set gpusPerWorker to ${nGpusPerNode}`,
      });
    }
  });
  return issues;
}
