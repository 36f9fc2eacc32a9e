import { log } from '@temporalio/activity';
import type { OwnedCluster } from '../../backends/backend.js';
import type { ReaperEntry, ReaperInput, ReaperReport } from '../../domain/cluster/reaper.js';
import type { ActivityDeps } from '../common/deps.js';

/** What to do with one listed cluster: never touch one whose owner runs; keep anything within grace. */
async function decide(
  deps: ActivityDeps,
  c: OwnedCluster,
  graceMs: number,
  now: number,
): Promise<Omit<ReaperEntry, 'backend' | 'cluster'>> {
  if (!c.owner)
    return {
      action: 'reported',
      reason: `no readable owner labels (${c.problem ?? 'missing'}); left for a person`,
    };
  const ownerWorkflowId = c.owner.workflowId;
  const owner = await deps.workflowStatus(ownerWorkflowId);
  if (owner?.status === 'RUNNING')
    return { ownerWorkflowId, action: 'kept', reason: 'owner workflow is running' };
  const since = owner ? Date.parse(owner.closeTime ?? '') : Date.parse(c.createdAt ?? '');
  const why = owner ? `owner workflow is ${owner.status.toLowerCase()}` : 'owner workflow does not exist';
  if (Number.isFinite(since) && now - since < graceMs)
    return { ownerWorkflowId, action: 'kept', reason: `${why}, within the ${graceMs / 1000} s grace period` };
  return { ownerWorkflowId, action: 'deleted', reason: why };
}

/**
 * One reaper pass: list the product's clusters on every backend, ask Temporal for each owner's
 * state, delete those whose owner is closed (completed, failed, cancelled, terminated, timed out)
 * or missing, after the grace period. Each decision is logged and returned in the report.
 */
export function createReapClusters(deps: ActivityDeps) {
  return async function reapClusters(input: ReaperInput): Promise<ReaperReport> {
    const started = Date.now();
    const entries: ReaperEntry[] = [];
    for (const backend of Object.values(deps.backends)) {
      if (!backend) continue;
      for (const cluster of await backend.listClusters()) {
        const decision = await decide(deps, cluster, input.graceSeconds * 1000, Date.now());
        const entry: ReaperEntry = { backend: backend.kind, cluster: cluster.handle.name, ...decision };
        if (entry.action === 'deleted') await backend.deleteCluster(cluster.handle);
        if (entry.action !== 'kept')
          log.warn(`reaper: ${entry.action} ${entry.backend}/${entry.cluster}: ${entry.reason}`);
        entries.push(entry);
      }
    }
    return { startedAt: new Date(started).toISOString(), durationMs: Date.now() - started, entries };
  };
}
