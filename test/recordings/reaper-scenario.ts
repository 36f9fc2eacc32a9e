import { fakeActivities } from '../helpers/fake-activities.js';
import type { Scenario } from '../helpers/history-recorder.js';

/** The reaper's pass (a Schedule runs it): one cluster of a closed workflow deleted, one kept. */
export const reaperScenarios: Record<string, Scenario> = {
  'reaper-pass': () => ({
    workflowId: 'reaper-pass',
    workflowType: 'reaper',
    args: [{ graceSeconds: 120 }],
    activities: fakeActivities({
      reapClusters: async () => ({
        startedAt: '2026-01-01T00:00:00.000Z',
        durationMs: 12,
        entries: [
          {
            backend: 'local',
            cluster: 'ragen-a-1',
            ownerWorkflowId: 'a',
            action: 'deleted',
            reason: 'owner closed',
          },
          {
            backend: 'local',
            cluster: 'ragen-b-1',
            ownerWorkflowId: 'b',
            action: 'kept',
            reason: 'owner running',
          },
        ],
      }),
    }).activities,
  }),
};
