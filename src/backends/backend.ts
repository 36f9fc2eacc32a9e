import type { ClusterHandle, ClusterOwner, ClusterStatus } from '../domain/cluster/cluster.js';
import type { ExperimentSpec } from '../domain/spec/experiment.js';
import type { NodeLedgerStore } from '../domain/node-health/node-ledger.js';

import type { PreflightCheck } from '../domain/run/results.js';

export type { PreflightCheck };

export interface CreateClusterRequest {
  name: string;
  spec: ExperimentSpec;
  owner: ClusterOwner;
}

/** A cluster this product made, as found by listing (for teardown backstops). */
export interface OwnedCluster {
  handle: ClusterHandle;
  /** undefined when the owner label or state is missing or malformed. */
  owner: ClusterOwner | undefined;
  createdAt?: string;
  problem?: string;
}

/**
 * The only seam between Temporal and compute. Every method is idempotent: activities retry.
 */
export interface ComputeBackend {
  readonly kind: 'local' | 'kuberay';
  /** Map the spec's argv (`python …`) onto the interpreter the cluster's nodes run. */
  resolveArgv(argv: readonly string[]): string[];
  /** API reachable, permissions, capacity; storage is checked by the activity. */
  preflight(spec: ExperimentSpec): Promise<PreflightCheck[]>;
  /** The Ray version the cluster will run, where the backend can know it before creating anything. */
  plannedRayVersion(spec: ExperimentSpec): Promise<string | undefined>;
  /** Create, or find the one that exists: a retry never makes a second cluster. */
  createCluster(request: CreateClusterRequest): Promise<ClusterHandle>;
  describeCluster(handle: ClusterHandle): Promise<ClusterStatus>;
  /** Delete and wait until nothing of it is left; deleting what is gone is success. */
  deleteCluster(handle: ClusterHandle): Promise<{ alreadyGone: boolean }>;
  listClusters(): Promise<OwnedCluster[]>;
  /**
   * The cluster's Ray auth token (RAY_AUTH_MODE=token) for dashboard calls, read from where the
   * backend keeps it (local: a 0600 file; kuberay: the cluster's Secret) at call time, so it never
   * travels in a handle or workflow history. undefined: the cluster has none. Required, so a
   * wrapping backend cannot forget it (one did: its clusters got job submissions without a token).
   */
  dashboardToken(handle: ClusterHandle): Promise<string | undefined>;
  /**
   * Where the head's dashboard is when the handle does not say (a KubeRay cluster created suspended
   * in a Kueue queue has no head, so no address, at create); absent: the handle always says.
   */
  dashboardUrlOf?(handle: ClusterHandle): Promise<string | undefined>;
  /**
   * The namespace's ledger of link-suspect nodes (domain/node-health/node-ledger.ts): createCluster avoids its
   * live entries; the all-reduce check records what its link test names.
   */
  nodeLedger(): NodeLedgerStore;
  /** Release long-lived connections (kuberay: its watches) when the worker stops. */
  close?(): void;
}
