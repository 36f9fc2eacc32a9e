import type { ComputeBackend } from '../../backends/backend.js';
import type { BudgetLedgerClient } from '../budget/ledger.js';
import type { BudgetsFile } from '../../domain/budget/budgets.js';
import type { RayHeadApi } from '../../backends/ray/dashboard-client.js';
import type { Progress } from '../../domain/run/progress.js';
import type { InspectedImage } from '../../registry/client.js';
import type { RegistryLocation } from '../../registry/reference.js';

/** What activities need from the outside world; tests hand in fakes of the same type. */
export interface ActivityDeps {
  backends: Partial<Record<'local' | 'kuberay', ComputeBackend>>;
  /** Signal the owning workflow with progress (throttled by the caller). */
  reportProgress(workflowId: string, progress: Progress): Promise<void>;
  /** Whether a pause (stopAtNextCheckpoint) waits for the workflow's next checkpoint (a query); absent: always yes. */
  stopAtCheckpointPending?(workflowId: string): Promise<boolean>;
  /** The Ray head's HTTP API at a dashboard URL (jobs, nodes, version), with the cluster's auth token. */
  rayHead(dashboardUrl: string, token?: string): RayHeadApi;
  /** The state of a workflow by id (latest run); undefined when no such workflow exists. */
  workflowStatus(workflowId: string): Promise<{ status: string; closeTime?: string } | undefined>;
  /** Reads an image's manifest and config from its registry (verify); the default reads the Docker config from the environment. */
  imageRegistry?: { inspect(loc: RegistryLocation): Promise<InspectedImage> };
  /** The worker's own Python (with huggingface_hub) for steps it runs itself: model staging. Default: the repository's .venv. */
  python?: string;
  /** The directory holding the probe packages (`ragen_probes/`) shipped with probe jobs; default: the repository's probes/. */
  probesDir?: string;
  /** The train activity signals a checkpoint at most this often (default 10 min; 0: every one). */
  checkpointSignalIntervalMs?: number;
  /** Poll interval of the heartbeat loops. */
  pollIntervalMs: number;
  /**
   * Team budgets: budgets.yaml as read now (RAGEN_BUDGETS_FILE, read on each reserve so an edit
   * applies to the next run) and the budget workflows. Absent: no run is budgeted.
   */
  budgets?: { load(): Promise<BudgetsFile | undefined>; ledger: BudgetLedgerClient };
  /** How often a run queued for its team's budget asks again (default BUDGET_REASK_MS, 15 s). */
  budgetPollIntervalMs?: number;
  /** How long a link suspect stays in the node ledger (RAGEN_NODE_SUSPECT_HOURS; default 24). */
  nodeSuspectHours?: number;
}
