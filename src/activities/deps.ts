import type { ComputeBackend } from '../backends/backend.js';
import type { RayHeadApi } from '../backends/ray/dashboard-client.js';
import type { Progress } from '../spec/progress.js';

/** What activities need from the outside world; tests hand in fakes of the same type. */
export interface ActivityDeps {
  backends: Partial<Record<'local' | 'kuberay', ComputeBackend>>;
  /** Signal the owning workflow with progress (throttled by the caller). */
  reportProgress(workflowId: string, progress: Progress): Promise<void>;
  /** The Ray head's HTTP API at a dashboard URL (jobs, nodes, version). */
  rayHead(dashboardUrl: string): RayHeadApi;
  /** The state of a workflow by id (latest run); undefined when no such workflow exists. */
  workflowStatus(workflowId: string): Promise<{ status: string; closeTime?: string } | undefined>;
  /** Poll interval of the heartbeat loops. */
  pollIntervalMs: number;
}
