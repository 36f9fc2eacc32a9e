import { z } from 'zod';

/**
 * An http(s) URL without credentials in it: the spec lands in the workflow history and the
 * manifest, so tokens and passwords come from the worker's environment instead.
 */
const ServiceUrl = (what: string, fix: string) =>
  z
    .string()
    .url(`must be an http(s) URL such as http://mlflow.internal:5000 (${what})`)
    .refine((u) => /^https?:\/\//i.test(u), {
      message: `must start with http:// or https:// (${what})`,
    })
    .refine((u) => !/^https?:\/\/[^/]*@/i.test(u), {
      message: `must not carry credentials (they would be kept in the workflow history and the manifest); remove user:password@ and ${fix}`,
    });

/** An MLflow tracking server spoken to over its REST API 2.0 (src/tracking/mlflow/). */
export const MlflowTrackingSchema = z.strictObject({
  /** The tracking server's base URL (what `mlflow server` prints), e.g. http://127.0.0.1:5000. */
  uri: ServiceUrl(
    'the MLflow tracking server',
    "set MLFLOW_TRACKING_TOKEN (or MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD) in the worker's environment",
  ),
  /** MLflow experiment name; created on first use. */
  experiment: z.string().min(1, 'name the MLflow experiment the runs go to').max(500),
});
export type MlflowTracking = z.infer<typeof MlflowTrackingSchema>;

/**
 * W&B through the trainer (`trainer.loggers` includes `wandb`): the project and entity the job's
 * WANDB_PROJECT/WANDB_ENTITY say. The API key never goes here: see wandbJobEnv.
 */
export const WandbTrackingSchema = z.strictObject({
  project: z.string().min(1).max(128).optional(),
  entity: z.string().min(1).max(128).optional(),
  /** WANDB_MODE: `offline` writes the run under the job's wandb dir without network. */
  mode: z.enum(['online', 'offline']).optional(),
});

export const TrackingSchema = z.strictObject({
  mlflow: MlflowTrackingSchema.optional(),
  wandb: WandbTrackingSchema.optional(),
});
export type Tracking = z.infer<typeof TrackingSchema>;

/** The events a notification target can ask for (`notify[].on`). */
export const NOTIFY_EVENTS = [
  'succeeded',
  'failed',
  'cancelled',
  'earlyStopped',
  'stalled',
  'paused',
  'failureBudgetExhausted',
] as const;
export const NotifyEventSchema = z.enum(NOTIFY_EVENTS);
export type NotifyEvent = z.infer<typeof NotifyEventSchema>;

export const NotifyTargetSchema = z.strictObject({
  /** Receives a JSON POST (Slack incoming webhooks accept it: the body has `text`). */
  url: ServiceUrl('the notification receiver', 'let the receiver authenticate by its URL path'),
  /** Which endings are posted; default every one. */
  on: z
    .array(NotifyEventSchema)
    .min(1, `list at least one of ${NOTIFY_EVENTS.join(', ')}`)
    .optional(),
});
export type NotifyTarget = z.infer<typeof NotifyTargetSchema>;

/** How recording a run in the tracker went (workflow results): a failure never changes the outcome. */
export const TrackingOutcomeSchema = z.strictObject({
  outcome: z.enum(['succeeded', 'failed', 'skipped']),
  error: z.string().optional(),
  runId: z.string().optional(),
  experimentId: z.string().optional(),
});
export type TrackingOutcome = z.infer<typeof TrackingOutcomeSchema>;
