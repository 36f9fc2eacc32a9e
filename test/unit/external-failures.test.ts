import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { RayJobConflict } from '../../src/backends/ray/dashboard-client.js';
import {
  RayHttpError,
  RayMalformedAnswer,
  RayTimeoutError,
  requestJson,
} from '../../src/backends/ray/http.js';
import { kubeFailure } from '../../src/backends/kuberay/kube-errors.js';
import { registryFailure } from '../../src/registry/errors.js';
import {
  EXTERNAL_FAILURE_RULES,
  UNCLASSIFIED,
  classifyExternalFailure,
} from '../../src/errors/external-failures.js';
import { RetriesExhausted, retryTransient } from '../../src/errors/retry-transient.js';

const rule = (name: string) => EXTERNAL_FAILURE_RULES.find((r) => r.name === name);
const netError = (code: string) => Object.assign(new Error(code), { code });

/** One row each: an error as the clients really produce it, and the rule it must fall under. */
const ROWS: { error: unknown; rule: string; verdict: 'transient' | 'permanent' }[] = [
  {
    error: new RayTimeoutError('http://h/api/jobs/', 10_000),
    rule: 'no answer in time',
    verdict: 'transient',
  },
  {
    error: new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
    rule: 'no answer in time',
    verdict: 'transient',
  },
  { error: netError('ECONNREFUSED'), rule: 'connection refused', verdict: 'transient' },
  {
    // undici's fetch: TypeError('fetch failed') with the socket error as its cause
    error: new TypeError('fetch failed', { cause: netError('ECONNRESET') }),
    rule: 'connection reset',
    verdict: 'transient',
  },
  { error: netError('EHOSTUNREACH'), rule: 'host unreachable', verdict: 'transient' },
  { error: new RayHttpError(408, 'u', ''), rule: 'HTTP 408 request timeout', verdict: 'transient' },
  { error: new RayHttpError(429, 'u', ''), rule: 'HTTP 429 too many requests', verdict: 'transient' },
  { error: new RayHttpError(503, 'u', 'busy'), rule: 'HTTP 5xx server error', verdict: 'transient' },
  {
    error: new RayHttpError(
      500,
      'u',
      'Job with submission_id x already exists. Please use a different submission_id.',
    ),
    rule: 'Ray submission id already used',
    verdict: 'permanent',
  },
  {
    error: new RayJobConflict('x-train-0', 'http://h', 'python other.py'),
    rule: 'exists with other parameters',
    verdict: 'permanent',
  },
  { error: new RayHttpError(401, 'u', ''), rule: 'HTTP 4xx refusal', verdict: 'permanent' },
  // client-node's ApiException: the HTTP status in a numeric `code`
  {
    error: Object.assign(new Error('Forbidden'), { code: 403, body: '{}' }),
    rule: 'HTTP 4xx refusal',
    verdict: 'permanent',
  },
  {
    error: new RayMalformedAnswer('u', 'Unexpected token <'),
    rule: 'malformed answer',
    verdict: 'permanent',
  },
];

describe('the external failure table (EXTERNAL_FAILURE_RULES)', () => {
  for (const row of ROWS) {
    it(`${(row.error as Error).name} ${(row.error as Error).message.slice(0, 60)} → ${row.rule}`, () => {
      const found = classifyExternalFailure(row.error);
      assert.equal(found.name, row.rule);
      assert.equal(found.verdict, row.verdict);
    });
  }

  it('every rule of the table has a row above', () => {
    const covered = new Set(ROWS.map((r) => r.rule));
    for (const r of EXTERNAL_FAILURE_RULES) assert.ok(covered.has(r.name), `no row for ${r.name}`);
  });

  it('an error of our own is no service failure: never retried in place', () => {
    assert.equal(classifyExternalFailure(new Error('undefined is not a function')), UNCLASSIFIED);
    assert.equal(classifyExternalFailure('a string'), UNCLASSIFIED);
  });

  it('a RayHttpError is permanent or not as the table says (the activity boundary marks it so)', () => {
    assert.equal(new RayHttpError(503, 'u', '').permanent, false);
    assert.equal(new RayHttpError(403, 'u', '').permanent, true);
    assert.equal(rule('HTTP 5xx server error')?.verdict, 'transient');
  });

  it('the other clients decide with the same table: Kubernetes 408 and the registry 503 are transient, 422 is not', () => {
    const action = { verb: 'create', resource: 'rayclusters.ray.io', namespace: 'ns' };
    assert.equal(
      kubeFailure(Object.assign(new Error('x'), { code: 408, body: '{}' }), action).permanent,
      false,
    );
    assert.equal(
      kubeFailure(Object.assign(new Error('x'), { code: 422, body: '{}' }), action).permanent,
      true,
    );
    const kubeDown = kubeFailure(new TypeError('fetch failed', { cause: netError('ECONNREFUSED') }), action);
    assert.equal(kubeDown.permanent, false);
    assert.match(kubeDown.message, /\[ECONNREFUSED\]/);
    const what = { registry: 'r', repository: 'p', digest: 'sha256:1', url: 'u', triedCredentials: [] };
    assert.equal(registryFailure(503, what).permanent, false);
    assert.equal(registryFailure(400, what).permanent, true);
  });
});

describe('retryTransient', () => {
  const fast = { initialDelayMs: 1, maxDelayMs: 4, wait: async () => undefined };

  it('retries a transient failure until it succeeds, reporting each retry with its rule', async () => {
    let calls = 0;
    const seen: string[] = [];
    const value = await retryTransient(
      'GET /api/version',
      async () => {
        if (++calls < 3) throw netError('ECONNRESET');
        return 'ok';
      },
      { ...fast, onRetry: (e) => seen.push(`${e.attempt}:${e.rule.name}`) },
    );
    assert.equal(value, 'ok');
    assert.deepEqual(seen, ['1:connection reset', '2:connection reset']);
  });

  it('throws a permanent failure at once, unchanged', async () => {
    let calls = 0;
    const refused = new RayHttpError(401, 'u', 'no token');
    await assert.rejects(
      retryTransient(
        'POST /api/jobs/',
        async () => {
          calls++;
          throw refused;
        },
        fast,
      ),
      (err) => err === refused,
    );
    assert.equal(calls, 1);
  });

  it('never retries what the caller handles itself', async () => {
    let calls = 0;
    await assert.rejects(
      retryTransient(
        'POST /api/jobs/',
        async () => {
          calls++;
          throw new RayHttpError(503, 'u', '');
        },
        { ...fast, handledByCaller: () => true },
      ),
    );
    assert.equal(calls, 1);
  });

  it('gives up once the budget has passed since the first failure, naming the tries and the rule', async () => {
    let calls = 0;
    const waits: number[] = [];
    await assert.rejects(
      retryTransient(
        'GET /api/jobs/x',
        async () => {
          calls++;
          throw netError('ECONNREFUSED');
        },
        {
          budgetMs: 1_000,
          initialDelayMs: 10,
          maxDelayMs: 20,
          wait: async (ms) => {
            waits.push(ms);
            await sleep(ms);
          },
        },
      ),
      (err) => err instanceof RetriesExhausted && /tries over .* connection refused/.test(err.message),
    );
    assert.ok(calls >= 3, `${calls} calls`);
    assert.deepEqual(waits.slice(0, 3), [10, 20, 20], 'the wait doubles up to maxDelayMs');
  });

  it('a dashboard that stalls once (no answer, then answers) costs one retry, not the call', async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      if (++requests === 1) return; // the first request never gets an answer
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ray_version":"2.60.0"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/version`;
    try {
      const retried: string[] = [];
      const body = await retryTransient(
        'GET /api/version',
        () => requestJson<{ ray_version: string }>(url, { timeoutMs: 200 }),
        {
          ...fast,
          onRetry: (e) => retried.push(e.rule.name),
        },
      );
      assert.equal(body.ray_version, '2.60.0');
      assert.deepEqual(retried, ['no answer in time']);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
