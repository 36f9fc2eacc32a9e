import type { ComputeBackend } from '../backends/backend.js';
import type { Progress } from '../spec/progress.js';

/** What activities need from the outside world; tests hand in fakes of the same type. */
export interface ActivityDeps {
  backends: Partial<Record<'local' | 'kuberay', ComputeBackend>>;
  /** Signal the owning workflow with progress (throttled by the caller). */
  reportProgress(workflowId: string, progress: Progress): Promise<void>;
  /** Poll interval of the heartbeat loops. */
  pollIntervalMs: number;
}
