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

function isNonRetryable(err: unknown): boolean {
  return !!err && typeof err === 'object' && 'nonRetryable' in err && err.nonRetryable === true;
}

/**
 * Records every activity attempt: its duration and outcome, and failures and retries by error type.
 * Runs in the worker around the activity, outside the workflow sandbox: no history event.
 */
export function activityMetricsInterceptor(metrics: ProductMetrics): ActivityInterceptorsFactory {
  return (ctx: Context) => {
    const inbound: ActivityInboundCallsInterceptor = {
      async execute(input, next) {
        const { activityType: stage, workflowType = 'unknown' } = ctx.info;
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
          if (outcome === 'failed') {
            const labels = { stage, error_type: errorType(err) };
            metrics.failures.inc(labels);
            // A failure not marked non-retryable is retried by the server's retry policy (unless its
            // attempts or schedule-to-close time are spent): counted where its error type is known.
            if (!isNonRetryable(err)) metrics.retries.inc(labels);
          }
          return Promise.reject(err);
        }
      },
    };
    return { inbound };
  };
}
