import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import { fakeActivities, heartbeatUntilCancelled } from '../helpers/fake-activities.js';
import { type Scenario, until } from '../helpers/history-recorder.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';
import { testInput, testSpec } from '../helpers/specs.js';

/** A tracker and a notification target (stand-ins answer both), so those commands are recorded too. */
const trackedAndNotified = () =>
  testSpec({
    tracking: { mlflow: { uri: 'http://127.0.0.1:1', experiment: 'recorded' } },
    notify: [{ url: 'http://127.0.0.1:1/hook' }],
  });

/** Experiments: every stage succeeds; training fails; the user cancels during training. */
export const experimentScenarios: Record<string, Scenario> = {
  'experiment-succeeded': () => ({
    workflowId: 'experiment-succeeded',
    workflowType: 'experiment',
    args: [testInput(trackedAndNotified())],
    activities: fakeActivities().activities,
  }),

  // KubeRay: the shared-storage proof and the all-reduce check (1.1.0/…-succeeded: before they ran together).
  'experiment-kuberay-succeeded': () => ({
    workflowId: 'experiment-kuberay-succeeded',
    workflowType: 'experiment',
    args: [testInput(kuberaySpec('/mnt/shared'))],
    activities: fakeActivities().activities,
  }),

  // Kueue: the admission wait, in the stage `queued` (1.1.0/experiment-kuberay-queued, recorded
  // before that stage, has it inside join).
  'experiment-kuberay-queued-stage': () => {
    const spec = kuberaySpec('/mnt/shared');
    spec.kuberay = { ...spec.kuberay!, queueName: 'team-gpus' };
    return {
      workflowId: 'experiment-kuberay-queued-stage',
      workflowType: 'experiment',
      args: [testInput(spec)],
      activities: fakeActivities().activities,
    };
  },

  'experiment-training-failed': () => ({
    workflowId: 'experiment-training-failed',
    workflowType: 'experiment',
    args: [testInput(trackedAndNotified())],
    activities: fakeActivities({
      train: async () => {
        throw ApplicationFailure.create({
          type: ErrorTypes.TrainingFailed,
          message: 'stand-in trainer exited 1 at step 7',
          nonRetryable: true,
        });
      },
    }).activities,
  }),

  'experiment-cancelled-in-train': () => {
    let training = false;
    return {
      workflowId: 'experiment-cancelled-in-train',
      workflowType: 'experiment',
      args: [testInput()],
      activities: fakeActivities({
        train: async () => {
          training = true;
          Context.current().heartbeat();
          return heartbeatUntilCancelled();
        },
      }).activities,
      drive: async (handle) => {
        await until('training', () => training);
        await until('the train stage', async () => (await handle.query<string>('stage')) === 'train');
        await handle.cancel();
      },
    };
  },
};
