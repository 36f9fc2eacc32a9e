import { type WorkflowInterceptorsFactory, metricMeter, workflowInfo } from '@temporalio/workflow';

/** The workflow types that are runs (the reaper's and other housekeeping workflows are not). */
const RUN_KINDS = new Set(['experiment', 'campaign', 'sweep']);

/**
 * Counts a run when its workflow starts: `ragen_runs_started` by kind, through the SDK's workflow
 * metric meter, which records nothing while a workflow replays and adds no history event (replay
 * safe). A continue-as-new is the same run, so it is not counted again. Campaign attempts and
 * sweep children are experiments, as in ragen_runs_finished_total.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const info = workflowInfo();
        if (RUN_KINDS.has(info.workflowType) && !info.continuedFromExecutionRunId) {
          metricMeter
            .createCounter(
              'ragen_runs_started',
              'runs',
              'Runs started, by kind (experiment, campaign, sweep)',
            )
            .add(1, { kind: info.workflowType });
        }
        return next(input);
      },
    },
  ],
});
