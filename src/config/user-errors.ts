/** Errors a user caused and can fix, and the one line each prints: shared by the CLI and the worker's startup. */
import {
  QueryNotRegisteredError,
  ScheduleNotFoundError,
  ServiceError,
  isGrpcServiceError,
} from '@temporalio/client';
import { NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/common';
import { ConfigError } from './config.js';
import { SpecError } from '../domain/spec/spec-error.js';
import { TemporalSettingsError } from '../temporal/temporal-connection.js';

/** A failure the user caused and can fix: printed as one line, no stack. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'UserError';
  }
}

/** Bad command-line input: exit 2, like the parser's own errors. */
export class UsageError extends UserError {
  constructor(message: string) {
    super(message, 2);
    this.name = 'UsageError';
  }
}

/** Where the CLI was talking to, for messages that name the fix. */
export interface ConnectionContext {
  address: string;
  namespace: string;
  profile?: string;
}

const GRPC_UNAVAILABLE = 14;

function settingsHint(ctx: ConnectionContext): string {
  return ctx.profile ? `profile '${ctx.profile}' (TEMPORAL_PROFILE)` : 'TEMPORAL_ADDRESS';
}

/** The one line for a Temporal server that does not answer. */
export function unreachableMessage(ctx: ConnectionContext): string {
  return (
    `cannot reach the Temporal server at ${ctx.address} (from ${settingsHint(ctx)}): ` +
    `start one with 'ragen-orchestrator dev' or use --embedded, or point TEMPORAL_ADDRESS or TEMPORAL_PROFILE at yours`
  );
}

function unreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (/Failed to connect before the deadline|ECONNREFUSED|No connection established/.test(err.message))
    return true;
  const grpc = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(grpc) && grpc.code === GRPC_UNAVAILABLE;
}

/** The name in the server's refusal of an unregistered search attribute (start, upsert or query; old and new wording). */
export function refusedSearchAttribute(err: unknown): string | undefined {
  for (let e = err; e instanceof Error; e = e.cause) {
    const m =
      /no mapping defined for search attribute (\w+)|search attribute:? (\w+) is not defined|invalid search attribute: (\w+)/.exec(
        e.message,
      );
    if (m) return m[1] ?? m[2] ?? m[3];
  }
  return undefined;
}

/**
 * The user-facing line and exit code for an error, or undefined for a bug (which gets its message
 * and, with RAGEN_DEBUG=1, its stack). Bad input exits 2, everything else 1.
 */
export function describeUserError(
  err: unknown,
  ctx?: ConnectionContext,
): { message: string; exitCode: number } | undefined {
  if (err instanceof UserError) return { message: err.message, exitCode: err.exitCode };
  if (err instanceof SpecError) return { message: err.message, exitCode: 2 };
  if (err instanceof ConfigError || err instanceof TemporalSettingsError)
    return { message: err.message, exitCode: 2 };
  if (err instanceof WorkflowNotFoundError) {
    const where = ctx ? ` in namespace '${ctx.namespace}' at ${ctx.address}` : '';
    return {
      message: `no workflow '${err.workflowId}'${where}: check the id (printed when it started; 'temporal workflow list' lists them) or the namespace (TEMPORAL_NAMESPACE)`,
      exitCode: 1,
    };
  }
  if (err instanceof ScheduleNotFoundError) {
    return {
      message: `no schedule '${err.scheduleId}': 'ragen-orchestrator schedule list' lists them`,
      exitCode: 1,
    };
  }
  if (err instanceof NamespaceNotFoundError) {
    return {
      message: `namespace '${err.namespace}' does not exist on the server: create it ('temporal operator namespace create --namespace ${err.namespace}') or fix TEMPORAL_NAMESPACE`,
      exitCode: 1,
    };
  }
  if (err instanceof QueryNotRegisteredError) {
    return { message: `the workflow does not answer this query: ${err.message.split('\n')[0]}`, exitCode: 1 };
  }
  const attribute = refusedSearchAttribute(err);
  if (attribute) {
    const ns = ctx?.namespace ?? 'default';
    return {
      message: `search attribute ${attribute} is not registered in namespace '${ns}': register the project's search attributes (docs/operations.md, "Search attributes": temporal operator search-attribute create --namespace ${ns} ...), or use 'ragen-orchestrator dev', whose server registers them`,
      exitCode: 1,
    };
  }
  if (ctx && unreachable(err)) return { message: unreachableMessage(ctx), exitCode: 1 };
  return undefined;
}
