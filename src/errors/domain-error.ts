import { type ErrorType, type TransientErrorType } from '../domain/failures/error-types.js';

/**
 * A failure as the backends, the registry client and the activities see it: a type of the failure
 * catalogue (src/domain/failures/catalogue.ts), a message that names the fix, whether retrying can
 * help, and details.
 * No Temporal here: the activity boundary (src/activities/common/failures.ts) maps it onto an
 * ApplicationFailure once, so code below the activities never depends on the SDK.
 */
export class DomainError extends Error {
  readonly type: ErrorType | TransientErrorType;
  /** true: retrying cannot fix it (the boundary marks it non-retryable). */
  readonly permanent: boolean;
  readonly details?: unknown;

  constructor(init: {
    type: ErrorType | TransientErrorType;
    message: string;
    permanent: boolean;
    details?: unknown;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    // The type as name: an error that somehow skipped the boundary still reaches Temporal typed.
    this.name = init.type;
    this.type = init.type;
    this.permanent = init.permanent;
    this.details = init.details;
  }
}

/** A failure that retrying cannot fix (bad input, a refusal, a mismatch): a type the catalogue calls permanent. */
export function permanent(type: ErrorType, message: string, details?: unknown): DomainError {
  return new DomainError({ type, message, permanent: true, details });
}

/**
 * A failure the activity's retry policy tries again (a server answering 5xx, a cluster not ready
 * yet): a type the catalogue calls transient.
 */
export function transient(
  type: TransientErrorType,
  message: string,
  details?: unknown,
  cause?: unknown,
): DomainError {
  return new DomainError({ type, message, permanent: false, details, cause });
}

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}
