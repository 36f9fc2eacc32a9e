import type { ReaperInput, ReaperReport } from '../domain/cluster/reaper.js';
import { reapClusters } from './policies.js';

/**
 * The teardown backstop, run by a Temporal Schedule (overlap skip): deletes clusters whose owning
 * workflow is closed or missing, which covers what in-workflow teardown cannot (terminate, run
 * timeouts, a crash during create). Returns the report of this pass.
 */
export async function reaper(input: ReaperInput): Promise<ReaperReport> {
  return reapClusters(input);
}
