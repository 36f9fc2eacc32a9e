import { z } from 'zod';
import { type ErrorType, ErrorTypes } from '../failures/error-types.js';

/** Who owns a cluster: every cluster the product creates carries these, so a reaper can find leaks. */
export const ClusterOwnerSchema = z.strictObject({
  experiment: z.string(),
  workflowId: z.string(),
  runId: z.string(),
  attempt: z.number().int().min(0),
});
export type ClusterOwner = z.infer<typeof ClusterOwnerSchema>;

/** Plain-JSON reference to a cluster, passed between activities through the workflow. */
export const ClusterHandleSchema = z.strictObject({
  backend: z.enum(['local', 'kuberay']),
  name: z.string(),
  namespace: z.string().optional(),
  dashboardUrl: z.string().optional(),
  owner: ClusterOwnerSchema,
});
export type ClusterHandle = z.infer<typeof ClusterHandleSchema>;

export const RayNodeSchema = z.strictObject({
  nodeId: z.string(),
  ip: z.string(),
  isHead: z.boolean(),
  alive: z.boolean(),
  gpus: z.number(),
});
export type RayNode = z.infer<typeof RayNodeSchema>;

export const ClusterStatusSchema = z.strictObject({
  /**
   * pending: starting; queued: suspended until a queue (Kueue) admits it; ready: head answers;
   * failed: cannot become ready; gone: nothing exists.
   */
  phase: z.enum(['pending', 'queued', 'ready', 'failed', 'gone']),
  /** With failed: the error type to raise (an image that cannot be pulled), instead of ClusterLost. */
  failureType: z.enum(Object.values(ErrorTypes) as [ErrorType, ...ErrorType[]]).optional(),
  nodes: z.array(RayNodeSchema),
  /** Alive nodes that are not the head. */
  workersAlive: z.number(),
  /** GPUs that Ray registers on alive nodes. */
  gpusRegistered: z.number(),
  headRayVersion: z.string().optional(),
  message: z.string().optional(),
  /** With queued: the 1-based place in its Kueue LocalQueue (1: next), when the Workloads are readable. */
  queuePosition: z.number().optional(),
});
export type ClusterStatus = z.infer<typeof ClusterStatusSchema>;
