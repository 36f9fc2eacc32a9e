import { Context } from '@temporalio/activity';
import { mapFailuresAtBoundary } from '../../src/activities/common/failures.js';
import type { Activities } from '../../src/activities/index.js';
import type { ClusterHandle } from '../../src/domain/cluster/cluster.js';

/**
 * Fake activities of the real Activities type, for workflow tests on the time-skipping server.
 * Every call is recorded in order; a test replaces the ones it wants to misbehave. They are served
 * through the product's failure boundary, so a fake may throw domain errors as real ones do.
 */
export function fakeActivities(overrides: Partial<Activities> = {}) {
  const calls: string[] = [];
  const handle = (name: string): ClusterHandle => ({
    backend: 'local',
    name,
    dashboardUrl: 'http://127.0.0.1:1',
    owner: { experiment: 'x', workflowId: 'w', runId: 'r', attempt: 0 },
  });
  const base: Activities = {
    preflight: async () => ({ checks: [{ name: 'fake', ok: true, detail: 'stand-in' }] }),
    verify: async () => ({ image: { verified: false, note: 'fake' }, plannedRayVersion: '2.60.0' }),
    submitCluster: async ({ name }) => handle(name),
    awaitAdmission: async () => ({ queuedSeconds: 0 }),
    awaitJoin: async () => ({ nodes: [], workersAlive: 2, gpusRegistered: 2, headRayVersion: '2.60.0' }),
    proveSharedStorage: async () => ({ nodes: 3 }),
    allReduceCheck: async () => ({ ok: true, path: 'fake', world_size: 2, bus_bandwidth_gbps: 1 }),
    train: async ({ spec }) => ({
      finalStep: spec.trainer.totalTrainingSteps,
      lastCheckpointStep: spec.trainer.totalTrainingSteps,
      lastMetrics: {},
      entrypoint: [],
    }),
    validate: async ({ checkpointPath }) => ({
      checkpoint: checkpointPath,
      step: 20,
      episodes: 32,
      seed: 123,
      success_rate: 0.75,
      mean_reward: 5,
      mean_actions: 4,
      records: [],
    }),
    hashCheckpoints: async () => ({ hashed: [], checkpoints: [] }),
    archive: async ({ draft }) => ({
      manifestPath: `/fake/${draft.temporal.workflowId}/manifest.json`,
      sha256: 'f'.repeat(64),
      checkpoints: 0,
    }),
    teardown: async () => ({ alreadyGone: false }),
    reapClusters: async () => ({ startedAt: '', durationMs: 0, entries: [] }),
    archiveSweep: async ({ manifest }) => ({
      manifestPath: `/fake/${manifest.temporal.workflowId}/sweep.json`,
      csvPath: `/fake/${manifest.temporal.workflowId}/sweep.csv`,
      sha256: 'f'.repeat(64),
    }),
    latestCompleteCheckpoint: async () => ({ checkpoints: [], untrusted: [] }),
    applyCheckpointRetention: async () => ({ kept: [], deleted: [] }),
    archiveCampaign: async ({ draft }) => ({
      manifestPath: `/fake/${draft.campaign}/campaign.json`,
      sha256: 'c'.repeat(64),
    }),
    // Stand-ins for the tracker (the real activity is tested against a real mlflow server).
    trackMlflowRun: async ({ mlflow }) => fakeTracked(mlflow.uri),
    trackMlflowParent: async ({ mlflow }) => fakeTracked(mlflow.uri),
    notify: async () => ({ status: 200, idempotencyKey: 'fake' }),
    // No budgets by default (as a worker without RAGEN_BUDGETS_FILE); budget tests use the real ones.
    reserveBudget: async () => ({ status: 'unbudgeted' }),
    settleBudget: async ({ key, gpuHours }) => ({ key, gpuHours, periodStart: '', spentAfter: gpuHours }),
  };
  const merged = { ...base, ...overrides };
  const recorded = Object.fromEntries(
    Object.entries(merged).map(([name, fn]) => [
      name,
      async (...args: unknown[]) => {
        calls.push(name);
        return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    ]),
  ) as Activities;
  return { activities: mapFailuresAtBoundary(recorded), calls };
}

const fakeTracked = (uri: string) => ({
  tracker: 'mlflow' as const,
  uri,
  experimentId: '0',
  runId: 'fake-run',
  artifacts: [],
  calls: 0,
});

/** An activity body that heartbeats until it is cancelled (a join or training that never ends). */
export async function heartbeatUntilCancelled(): Promise<never> {
  const ctx = Context.current();
  for (;;) {
    ctx.heartbeat();
    await ctx.sleep(200);
  }
}
