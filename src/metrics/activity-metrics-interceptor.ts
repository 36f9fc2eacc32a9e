import type { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { ActivityInboundCallsInterceptor, ActivityInterceptorsFactory } from '@temporalio/worker';
import type { ProductMetrics } from './product-metrics.js';
import { observeActivityEnd } from './run-end-observer.js';

/** The error type a failure is counted under: an ApplicationFailure's type, else the class name. */
export function errorType(err: unknown): string {
  if (err && typeof err === 'object' && 'type' in err && typeof err.type === 'string' && err.type)
    return err.type;
  return err instanceof Error ? err.name : 'unknown';
}

/**
 * Records every activity attempt: its duration and outcome, and failures and retries by error type.
 * Runs in the worker around the activity, outside the workflow sandbox: no history event.
 */
export function activityMetricsInterceptor(metrics: ProductMetrics): ActivityInterceptorsFactory {
  return (ctx: Context) => {
    const inbound: ActivityInboundCallsInterceptor = {
      async execute(input, next) {
        const { activityType: stage, workflowType = 'unknown', attempt } = ctx.info;
        // The attempt does not learn why the one before failed: that attempt counted its error type.
        if (attempt > 1) metrics.retries.inc({ stage });
        const end = metrics.stageDuration.startTimer({ workflow_type: workflowType, stage });
        try {
          const result = await next(input);
          observeActivityEnd(metrics, stage, input.args, result);
          end({ outcome: 'succeeded' });
          metrics.activityOutcomes.inc({ workflow_type: workflowType, stage, outcome: 'succeeded' });
          return result;
        } catch (err) {
          const outcome = err instanceof CancelledFailure ? 'cancelled' : 'failed';
          end({ outcome });
          metrics.activityOutcomes.inc({ workflow_type: workflowType, stage, outcome });
          if (outcome === 'failed') metrics.failures.inc({ stage, error_type: errorType(err) });
          return Promise.reject(err);
        }
      },
    };
    return { inbound };
  };
}
