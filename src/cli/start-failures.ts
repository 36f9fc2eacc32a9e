import { type Client, ServiceError, isGrpcServiceError } from '@temporalio/client';
import {
  NamespaceNotFoundError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
} from '@temporalio/common';
import { type ConnectionContext, UserError, refusedSearchAttribute } from '../config/user-errors.js';
import { searchAttributeDefinitions } from '../workflows/search-attributes.js';

/**
 * Why the server refused to start a workflow, in the terms an operator fixes it by. The client
 * reports each as a different error: a ServiceError whose cause is the gRPC status
 * (INVALID_ARGUMENT for an unregistered search attribute, PERMISSION_DENIED/UNAUTHENTICATED for
 * credentials), NamespaceNotFoundError (or a bare NOT_FOUND from servers that send no details),
 * WorkflowExecutionAlreadyStartedError.
 */
export type StartFailure =
  | { kind: 'missing-search-attributes'; named: string }
  | { kind: 'unknown-namespace' }
  | { kind: 'permission-denied'; detail: string }
  | { kind: 'already-running'; workflowId: string };

const GRPC = { PERMISSION_DENIED: 7, UNAUTHENTICATED: 16 } as const;

export function classifyStartFailure(err: unknown): StartFailure | undefined {
  if (err instanceof WorkflowExecutionAlreadyStartedError)
    return { kind: 'already-running', workflowId: err.workflowId };
  // A start names no workflow that could be missing: NOT_FOUND there is the namespace.
  if (err instanceof NamespaceNotFoundError || err instanceof WorkflowNotFoundError)
    return { kind: 'unknown-namespace' };
  const named = refusedSearchAttribute(err);
  if (named) return { kind: 'missing-search-attributes', named };
  const grpc = err instanceof ServiceError ? err.cause : err;
  if (
    isGrpcServiceError(grpc) &&
    (grpc.code === GRPC.PERMISSION_DENIED || grpc.code === GRPC.UNAUTHENTICATED)
  )
    return { kind: 'permission-denied', detail: grpc.details || grpc.message };
  return undefined;
}

function credentialsSource(ctx: ConnectionContext): string {
  return ctx.profile
    ? `profile '${ctx.profile}' (TEMPORAL_PROFILE)`
    : 'TEMPORAL_API_KEY or TEMPORAL_TLS_CLIENT_CERT_PATH/TEMPORAL_TLS_CLIENT_KEY_PATH';
}

/** The one line for credentials the server refuses (at connect or at a start). */
export function credentialsRefusedMessage(ctx: ConnectionContext, action: string, detail: string): string {
  return (
    `the Temporal server at ${ctx.address} refused to ${action} in namespace '${ctx.namespace}' (${detail}): ` +
    `the credentials from ${credentialsSource(ctx)} are missing, expired or lack access to the namespace; ` +
    `set an API key or mTLS client certificate that the namespace accepts`
  );
}

/** `temporal operator search-attribute create` for the attributes given (the CLI takes repeated pairs). */
export function searchAttributeCreateCommand(
  namespace: string,
  attrs: { name: string; type: string }[],
): string {
  const pairs = attrs.map((a) => `--name ${a.name} --type ${a.type}`).join(' ');
  return `temporal operator search-attribute create --namespace ${namespace} ${pairs}`;
}

/**
 * The one line for a start failure. `missing` is every project attribute the namespace lacks (read
 * from the server when it could be; else only the one the server named).
 */
export function startFailureMessage(
  f: StartFailure,
  ctx: ConnectionContext,
  missing?: { name: string; type: string }[],
): string {
  const ns = ctx.namespace;
  switch (f.kind) {
    case 'missing-search-attributes': {
      const attrs =
        missing && missing.length > 0
          ? missing
          : searchAttributeDefinitions().filter((d) => d.name === f.named);
      const names = attrs.map((a) => a.name).join(', ');
      return (
        `namespace '${ns}' at ${ctx.address} lacks the project's search attribute${attrs.length > 1 ? 's' : ''} ${names}: ` +
        `register them with '${searchAttributeCreateCommand(ns, attrs)}' ` +
        `(docs/operations.md, "Search attributes"), or use 'ragen-orchestrator dev', whose server registers them`
      );
    }
    case 'unknown-namespace':
      return (
        `namespace '${ns}' does not exist at ${ctx.address}: create it ('temporal operator namespace create --namespace ${ns}') ` +
        `or set TEMPORAL_NAMESPACE (or the profile's namespace) to one that exists`
      );
    case 'permission-denied':
      return credentialsRefusedMessage(ctx, 'start a workflow', f.detail);
    case 'already-running':
      return (
        `a workflow with id '${f.workflowId}' is already running in namespace '${ns}': ` +
        `follow it with 'ragen-orchestrator status ${f.workflowId}', cancel it ('ragen-orchestrator cancel ${f.workflowId}'), or start under another name`
      );
  }
}

/** The project's attributes the namespace lacks, or undefined when the server will not list them. */
async function missingSearchAttributes(
  client: Client,
  namespace: string,
): Promise<{ name: string; type: string }[] | undefined> {
  try {
    const listed = await client.connection.operatorService.listSearchAttributes({ namespace });
    const registered = listed.customAttributes ?? {};
    return searchAttributeDefinitions().filter((d) => !(d.name in registered));
  } catch {
    return undefined;
  }
}

/** Runs a workflow start; a refusal the operator can fix becomes one UserError line (exit 1). */
export async function startOrExplain<T>(
  client: Client,
  ctx: ConnectionContext,
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const failure = classifyStartFailure(err);
    if (!failure) throw err;
    const missing =
      failure.kind === 'missing-search-attributes'
        ? await missingSearchAttributes(client, ctx.namespace)
        : undefined;
    throw new UserError(startFailureMessage(failure, ctx, missing), 1, { cause: err });
  }
}
