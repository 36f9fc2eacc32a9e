import { ApplicationFailure } from '@temporalio/common';
import type { ErrorType } from '../spec/error-types.js';

/** A failure that retrying cannot fix; its type is listed in the workflow's nonRetryableErrorTypes. */
export function permanent(type: ErrorType, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: details === undefined ? undefined : [details] });
}
