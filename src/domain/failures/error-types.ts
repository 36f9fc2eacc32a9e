import { FAILURE_CATALOGUE, type FailureName } from './catalogue.js';

/**
 * The names of the failure catalogue (catalogue.ts), for the code that throws and compares them.
 * Derived, never listed here: a new error type is an entry in the catalogue.
 */
type RetryOf<K extends FailureName> = (typeof FAILURE_CATALOGUE)[K]['retry'];

/** Failures thrown as `permanent(type, …)` (or decided where thrown): never retried by Temporal. */
export type ErrorType = { [K in FailureName]: RetryOf<K> extends 'transient' ? never : K }[FailureName];

/** Failures thrown as `transient(type, …)`: retried by the activity's policy. */
export type TransientErrorType = {
  [K in FailureName]: RetryOf<K> extends 'transient' ? K : never;
}[FailureName];

function namesWhere<T extends FailureName>(keep: (retry: string) => boolean): { readonly [K in T]: K } {
  const names = Object.entries(FAILURE_CATALOGUE)
    .filter(([, entry]) => keep(entry.retry))
    .map(([name]) => [name, name]);
  return Object.fromEntries(names) as { readonly [K in T]: K };
}

export const ErrorTypes = namesWhere<ErrorType>((retry) => retry !== 'transient');
export const TransientErrorTypes = namesWhere<TransientErrorType>((retry) => retry === 'transient');
