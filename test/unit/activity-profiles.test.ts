import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ActivityDeps, createActivities } from '../../src/activities/index.js';
import { activityProfiles, profiles } from '../../src/workflows/policies.js';

const deps: ActivityDeps = {
  backends: {},
  reportProgress: async () => undefined,
  rayHead: () => assert.fail('building activities talks to no Ray head'),
  workflowStatus: async () => undefined,
  imageRegistry: { inspect: () => assert.fail('building activities reads no registry') },
  pollIntervalMs: 1000,
};

describe('activity profiles (bound once, in src/workflows/policies.ts)', () => {
  it('binds every activity createActivities builds to exactly one profile, and nothing else', () => {
    const built = Object.keys(createActivities(deps)).sort();
    assert.deepEqual(
      Object.keys(activityProfiles).sort(),
      built,
      'each activity needs one entry in activityProfiles',
    );
  });

  it('lists every activity with its profile', () => {
    const byProfile: Record<string, string[]> = {};
    for (const [activity, profile] of Object.entries(activityProfiles))
      (byProfile[profile] ??= []).push(activity);
    for (const [profile, activities] of Object.entries(byProfile))
      console.log(`${profile.padEnd(12)} ${activities.join(', ')}`);
    assert.deepEqual(byProfile, {
      quick: [
        'preflight',
        'verify',
        'archiveSweep',
        'archiveCampaign',
        'trackMlflowRun',
        'trackMlflowParent',
        'notify',
        'applyCheckpointRetention',
      ],
      polling: ['awaitAdmission', 'awaitJoin', 'proveSharedStorage', 'allReduceCheck', 'validate'],
      hashing: ['archive', 'latestCompleteCheckpoint', 'hashCheckpoints'],
      longRunning: ['train'],
      clusterStart: ['submitCluster'],
      teardown: ['teardown'],
      cleanup: ['reapClusters'],
      budgetQueue: ['reserveBudget'],
      budgetSettle: ['settleBudget'],
    });
  });

  it('gives the activities that start or delete clusters, poll, train or hash checkpoints a heartbeat timeout', () => {
    for (const activity of [
      'submitCluster',
      'teardown',
      'awaitAdmission',
      'awaitJoin',
      'proveSharedStorage',
      'allReduceCheck',
      'validate',
      'train',
      'archive',
      'latestCompleteCheckpoint',
      'hashCheckpoints',
      'reserveBudget',
    ] as const) {
      const profile: { heartbeatTimeout?: string } = profiles[activityProfiles[activity]];
      assert.ok(profile.heartbeatTimeout, `${activity} (${activityProfiles[activity]}) must heartbeat`);
    }
  });

  it('states an explicit retry policy in every profile and lists no error types there (the throw site decides)', () => {
    for (const [name, profile] of Object.entries(profiles)) {
      assert.ok(profile.retry, `${name} has a retry policy`);
      assert.equal(
        (profile.retry as { nonRetryableErrorTypes?: unknown }).nonRetryableErrorTypes,
        undefined,
        name,
      );
    }
  });
});
