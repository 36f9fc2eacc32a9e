import { Context } from '@temporalio/activity';
import type { RayNode } from '../../domain/cluster/cluster.js';
import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { type ExperimentSpec, workerNodes } from '../../domain/spec/experiment.js';
import type { JoinHeartbeat } from '../../domain/run/progress.js';
import { backendOf } from '../common/backend-of.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { beat as recordHeartbeat, heartbeatAndWait, workflowIdOfActivity } from '../common/heartbeat-loop.js';
import { pollDelays } from '../common/poll-schedule.js';

/** How often, at most, a change in why the join waits is signalled alone. */
const WAITING_EVERY_MS = 30_000;

export interface JoinResult {
  nodes: RayNode[];
  workersAlive: number;
  gpusRegistered: number;
  headRayVersion?: string;
}

/**
 * Stage 4a. Poll until every worker node joined Ray and Ray registers the requested GPUs (every
 * 250 ms at first: the cluster is usually ready at once or within seconds; see pollDelays).
 * Heartbeat: {nodesAlive, gpusRegistered}. The join deadline is a workflow timer that cancels this
 * activity; a cluster that cannot become ready fails it at once (ClusterLost, the workflow resubmits).
 * Then the head's Ray version must equal rayVersion (the authoritative version check).
 */
export function createAwaitJoin(deps: ActivityDeps) {
  return async function awaitJoin(input: {
    spec: ExperimentSpec;
    handle: ClusterHandle;
  }): Promise<JoinResult> {
    const { spec, handle } = input;
    const backend = backendOf(deps, spec.backend);
    const wantWorkers = workerNodes(spec);
    const wantGpus = spec.trainer.nnodes * spec.trainer.nGpusPerNode;
    const workflowId = workflowIdOfActivity();
    let reported = -1;
    let said: string | undefined;
    let told: string | undefined;
    let toldAt = Date.now();
    const nextDelay = pollDelays(deps.pollIntervalMs);
    for (;;) {
      const status = await backend.describeCluster(handle);
      if (status.phase === 'failed' || status.phase === 'gone') {
        throw permanent(
          status.failureType ?? ErrorTypes.ClusterLost,
          `cluster ${handle.name} is ${status.phase} while waiting for workers: ${status.message ?? ''}`,
        );
      }
      if (status.phase !== 'ready' || status.workersAlive < wantWorkers) {
        // Why it waits (Pods the scheduler cannot place, suspects avoided): in the worker's log once per change.
        if (status.message && status.message !== said)
          Context.current().log.info(`join ${handle.name}: waiting: ${status.message}`);
        said = status.message;
      }
      const beat: JoinHeartbeat = {
        nodesAlive: status.nodes.filter((n) => n.alive).length,
        gpusRegistered: status.gpusRegistered,
      };
      // Why it waits goes to the workflow too, so a missed join deadline says it: with each change of
      // joined workers, and on its own (a signal is a history event) only for a wait past 30 s.
      const waiting =
        status.phase !== 'ready' || status.workersAlive < wantWorkers ? (status.message ?? '') : '';
      const longWait = waiting !== (told ?? '') && Date.now() - toldAt >= WAITING_EVERY_MS;
      if (status.workersAlive !== reported || longWait) {
        reported = status.workersAlive;
        told = waiting;
        toldAt = Date.now();
        await deps
          .reportProgress(workflowId, {
            joinedWorkers: status.workersAlive,
            gpusRegistered: status.gpusRegistered,
            waiting,
          })
          .catch(() => undefined);
      }
      if (
        status.phase === 'ready' &&
        status.workersAlive >= wantWorkers &&
        status.gpusRegistered >= wantGpus
      ) {
        if (status.headRayVersion !== undefined && status.headRayVersion !== spec.rayVersion) {
          throw permanent(
            ErrorTypes.RayVersionMismatch,
            `the Ray head of ${handle.name} runs Ray ${status.headRayVersion}, the spec declares rayVersion ${spec.rayVersion}; use an image with Ray ${spec.rayVersion} or set rayVersion: ${status.headRayVersion}`,
          );
        }
        recordHeartbeat(beat);
        return {
          nodes: status.nodes,
          workersAlive: status.workersAlive,
          gpusRegistered: status.gpusRegistered,
          headRayVersion: status.headRayVersion,
        };
      }
      await heartbeatAndWait(beat, nextDelay());
    }
  };
}
