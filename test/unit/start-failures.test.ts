import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Metadata } from '@grpc/grpc-js';
import { Client, Connection, ServiceError } from '@temporalio/client';
import {
  NamespaceNotFoundError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
} from '@temporalio/common';
import { classifyStartFailure, startFailureMessage, startOrExplain } from '../../src/cli/start-failures.js';
import { UserError } from '../../src/config/user-errors.js';
import { searchAttributeDefinitions } from '../../src/workflows/search-attributes.js';
import { cli } from '../helpers/cli-process.js';
import { refusingTemporalStandin } from '../helpers/refusing-temporal-standin.js';
import { validSpecYaml } from '../helpers/specs.js';

const ctx = { address: 'temporal.example:7233', namespace: 'research' };

/** A gRPC status error as @grpc/grpc-js builds it, wrapped as the client's start does. */
function startRefused(code: number, details: string): ServiceError {
  const names: Record<number, string> = {
    3: 'INVALID_ARGUMENT',
    7: 'PERMISSION_DENIED',
    16: 'UNAUTHENTICATED',
  };
  const grpc = Object.assign(new Error(`${code} ${names[code]}: ${details}`), {
    code,
    details,
    metadata: new Metadata(),
  });
  return new ServiceError('Failed to start Workflow', { cause: grpc });
}

describe('start failures: one line naming the cause and the fix', () => {
  it('missing search attributes: names every one missing and the command that registers them', () => {
    const err = startRefused(3, 'Namespace research has no mapping defined for search attribute RagenKind');
    const f = classifyStartFailure(err);
    assert.deepEqual(f, { kind: 'missing-search-attributes', named: 'RagenKind' });
    const all = searchAttributeDefinitions();
    const line = startFailureMessage(f!, ctx, all);
    assert.equal(line.split('\n').length, 1);
    for (const { name, type } of all) assert.ok(line.includes(`--name ${name} --type ${type}`), name);
    assert.match(line, /temporal operator search-attribute create --namespace research --name RagenName/);
    assert.match(line, /'ragen-orchestrator dev'/);
    // When the server will not list them: at least the one it named, with its type.
    assert.match(startFailureMessage(f!, ctx), /attribute RagenKind: .*--name RagenKind --type Keyword'/);
    // The older server wording is the same failure.
    assert.equal(
      classifyStartFailure(startRefused(3, 'search attribute RagenName is not defined'))?.kind,
      'missing-search-attributes',
    );
  });

  it('an unknown namespace (NamespaceNotFoundError, or NOT_FOUND without details) names it and how to create it', () => {
    for (const err of [
      new NamespaceNotFoundError('research'),
      new WorkflowNotFoundError('not found', 'x', ''),
    ]) {
      const f = classifyStartFailure(err);
      assert.deepEqual(f, { kind: 'unknown-namespace' });
      assert.match(
        startFailureMessage(f!, ctx),
        /^namespace 'research' does not exist at temporal\.example:7233: create it \('temporal operator namespace create --namespace research'\) or set TEMPORAL_NAMESPACE/,
      );
    }
  });

  it('permission denied / unauthenticated names the credentials to fix', () => {
    for (const code of [7, 16]) {
      const f = classifyStartFailure(startRefused(code, 'Request unauthorized.'));
      assert.deepEqual(f, { kind: 'permission-denied', detail: 'Request unauthorized.' });
      const line = startFailureMessage(f!, ctx);
      assert.match(line, /refused to start a workflow in namespace 'research' \(Request unauthorized\.\)/);
      assert.match(line, /TEMPORAL_API_KEY or TEMPORAL_TLS_CLIENT_CERT_PATH/);
      assert.match(
        startFailureMessage(f!, { ...ctx, profile: 'prod' }),
        /profile 'prod' \(TEMPORAL_PROFILE\)/,
      );
    }
  });

  it('an id already running names the id and how to follow or cancel it', () => {
    const f = classifyStartFailure(
      new WorkflowExecutionAlreadyStartedError(
        'Workflow execution already started',
        'experiment-a-1',
        'experiment',
      ),
    );
    assert.deepEqual(f, { kind: 'already-running', workflowId: 'experiment-a-1' });
    assert.match(
      startFailureMessage(f!, ctx),
      /'experiment-a-1' is already running .*status experiment-a-1.*cancel/,
    );
  });

  it('anything else is not translated (a bug keeps its stack)', () => {
    assert.equal(classifyStartFailure(startRefused(3, 'WorkflowId is not set on request.')), undefined);
    assert.equal(classifyStartFailure(new Error('boom')), undefined);
  });

  it('permission denied as the real client builds it, from a stand-in frontend that refuses (the dev server has no auth)', async () => {
    const standin = await refusingTemporalStandin();
    try {
      const connection = await Connection.connect({ address: standin.address });
      const client = new Client({ connection, namespace: 'research' });
      const err = await startOrExplain(client, { address: standin.address, namespace: 'research' }, () =>
        client.workflow.start('experiment', { taskQueue: 'q', workflowId: 'w', args: [] }),
      ).catch((e: unknown) => e);
      await connection.close();
      assert.ok(err instanceof UserError, String(err));
      assert.match(
        err.message,
        /refused to start a workflow in namespace 'research' \(Request unauthorized\.\)/,
      );

      // And the CLI end to end: one line, exit 1, no stack.
      const dir = await mkdtemp(join(tmpdir(), 'start-refused-'));
      await writeFile(join(dir, 'spec.yaml'), validSpecYaml(dir));
      const r = await cli(['run', join(dir, 'spec.yaml')], { TEMPORAL_ADDRESS: standin.address });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(
        r.stderr,
        /refused to start a workflow in namespace 'default' \(Request unauthorized\.\).*TEMPORAL_API_KEY/,
      );
    } finally {
      await standin.close();
    }
  });
});
