import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { REPO_ROOT } from '../../src/config/config.js';
import { type DomainError, isDomainError } from '../../src/errors/domain-error.js';
import type { RetryOptions } from '../../src/errors/retry-transient.js';
import type { SecretObject } from '../../src/backends/kuberay/auth-secret.js';
import { KubeClients } from '../../src/backends/kuberay/kube-client/clients.js';
import type { RayClusterObject } from '../../src/backends/kuberay/raycluster.js';
import { tsFilesUnder } from '../helpers/import-graph.js';
import { type KubeApiStandin, startKubeApiStandin } from '../helpers/kube-api-standin.js';

/**
 * The Kubernetes client's one transport: every call of every resource client is counted (the API
 * budget is a reported number), a transient failure retried in place, a permanent one not, each
 * against a stand-in API server that records what it was sent (the same requests the kube
 * integration tests send to a real kube-apiserver).
 */

const NS = 'standin-ns';
const RC = '/apis/ray.io/v1/namespaces/standin-ns/rayclusters';
const rayCluster = {
  apiVersion: 'ray.io/v1',
  kind: 'RayCluster',
  metadata: { name: 'c1', namespace: NS },
  spec: {},
} as unknown as RayClusterObject;
const secret: SecretObject = {
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'Opaque',
  metadata: { name: 'c1-ray-auth', namespace: NS, resourceVersion: '7' },
  stringData: { auth_token: 'x' },
} as unknown as SecretObject;

interface Call {
  name: string;
  call: (k: KubeClients) => Promise<unknown>;
  /** What the API server receives, once per try. */
  sent: string;
}

/** One row per request a resource client makes (a method with two requests has two rows). */
const CALLS: Call[] = [
  { name: 'rayClusters.create', call: (k) => k.rayClusters.create(rayCluster), sent: `POST ${RC}` },
  { name: 'rayClusters.get', call: (k) => k.rayClusters.get('c1'), sent: `GET ${RC}/c1` },
  {
    name: 'rayClusters.delete',
    call: (k) => k.rayClusters.delete('c1'),
    sent: `DELETE ${RC}/c1?propagationPolicy=Background`,
  },
  {
    name: 'rayClusters.list',
    call: (k) => k.rayClusters.list('app=x'),
    sent: `GET ${RC}?labelSelector=app%3Dx`,
  },
  {
    name: 'rayClusters.crd',
    call: (k) => k.rayClusters.crd(),
    sent: 'GET /apis/apiextensions.k8s.io/v1/customresourcedefinitions/rayclusters.ray.io',
  },
  {
    name: 'pods.listOfCluster',
    call: (k) => k.pods.listOfCluster('c1'),
    sent: `GET /api/v1/namespaces/${NS}/pods?labelSelector=ray.io%2Fcluster%3Dc1`,
  },
  {
    name: 'pods.countOfCluster',
    call: (k) => k.pods.countOfCluster('c1'),
    sent: `GET /api/v1/namespaces/${NS}/pods?labelSelector=ray.io%2Fcluster%3Dc1`,
  },
  {
    name: 'pods.probeEvents',
    call: (k) => k.pods.probeEvents(),
    sent: `GET /api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.kind%3DPod%2Creason%3DUnhealthy`,
  },
  {
    name: 'pods.claim',
    call: (k) => k.pods.claim('data'),
    sent: `GET /api/v1/namespaces/${NS}/persistentvolumeclaims/data`,
  },
  {
    name: 'secrets.create',
    call: (k) => k.secrets.create(secret),
    sent: `POST /api/v1/namespaces/${NS}/secrets`,
  },
  {
    name: 'secrets.listMarks',
    call: (k) => k.secrets.listMarks('app=x'),
    sent: `GET /api/v1/namespaces/${NS}/secrets?labelSelector=app%3Dx`,
  },
  {
    name: 'secrets.get',
    call: (k) => k.secrets.get('c1-ray-auth'),
    sent: `GET /api/v1/namespaces/${NS}/secrets/c1-ray-auth`,
  },
  {
    name: 'secrets.replace',
    call: (k) => k.secrets.replace(secret),
    sent: `PUT /api/v1/namespaces/${NS}/secrets/c1-ray-auth`,
  },
  {
    name: 'secrets.delete',
    call: (k) => k.secrets.delete('c1-ray-auth'),
    sent: `DELETE /api/v1/namespaces/${NS}/secrets/c1-ray-auth`,
  },
  {
    name: 'configMaps.get',
    call: (k) => k.configMaps.get('ledger'),
    sent: `GET /api/v1/namespaces/${NS}/configmaps/ledger`,
  },
  {
    name: 'configMaps.write',
    call: (k) => k.configMaps.write({ metadata: { name: 'ledger' }, data: { a: '1' } }),
    sent: `POST /api/v1/namespaces/${NS}/configmaps`,
  },
  {
    name: 'configMaps.write',
    call: (k) => k.configMaps.write({ metadata: { name: 'ledger', resourceVersion: '7' }, data: { a: '1' } }),
    sent: `PUT /api/v1/namespaces/${NS}/configmaps/ledger`,
  },
  {
    name: 'workloads.list',
    call: (k) => k.workloads.list(),
    sent: `GET /apis/kueue.x-k8s.io/v1beta2/namespaces/${NS}/workloads`,
  },
  { name: 'nodes.allocatableGpus', call: (k) => k.nodes.allocatableGpus(), sent: 'GET /api/v1/nodes' },
  {
    name: 'nodes.annotations',
    call: (k) => k.nodes.annotations('suspect'),
    sent: 'GET /api/v1/nodes?labelSelector=suspect',
  },
  {
    name: 'nodes.patchMetadata',
    call: (k) => k.nodes.patchMetadata('n1', { labels: { a: null }, annotations: {} }),
    sent: 'PATCH /api/v1/nodes/n1 application/merge-patch+json',
  },
  {
    name: 'accessReviews.namespaceRules',
    call: (k) => k.accessReviews.namespaceRules(),
    sent: 'POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
  },
  {
    name: 'accessReviews.canI',
    call: (k) => k.accessReviews.canI('list', 'pods', ''),
    sent: 'POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
  },
];

interface WatchCall {
  name: string;
  open: (k: KubeClients, onEvent: (name: string) => void, onDone: (err: unknown) => void) => Promise<unknown>;
  sent: string;
}

const WATCHES: WatchCall[] = [
  {
    name: 'rayClusters.watch',
    open: (k, onEvent, onDone) =>
      k.rayClusters.watch('c1', '7', (e) => onEvent(`${e.type} ${e.object.metadata.name}`), onDone),
    sent: `GET ${RC}?watch=true&fieldSelector=metadata.name%3Dc1&resourceVersion=7&allowWatchBookmarks=true&timeoutSeconds=300`,
  },
  {
    name: 'pods.watchOfCluster',
    open: (k, onEvent, onDone) =>
      k.pods.watchOfCluster('c1', '7', (e) => onEvent(`${e.type} ${e.object.metadata?.name}`), onDone),
    sent: `GET /api/v1/namespaces/${NS}/pods?watch=true&labelSelector=ray.io%2Fcluster%3Dc1&resourceVersion=7&allowWatchBookmarks=true&timeoutSeconds=300`,
  },
];

/** Retries in place whose waits return at once: the test advances them, no clock does. */
const RETRY_AT_ONCE: Partial<RetryOptions> = {
  budgetMs: 60_000,
  initialDelayMs: 1,
  maxDelayMs: 1,
  wait: async () => {},
};

/** Opens a watch and waits for its end: the events it delivered and the error it ended with. */
async function watched(w: WatchCall, k: KubeClients): Promise<{ events: string[]; err: unknown }> {
  const events: string[] = [];
  let ended!: (err: unknown) => void;
  const done = new Promise<unknown>((resolve) => (ended = resolve));
  await w.open(k, (e) => events.push(e), ended);
  return { events, err: await done };
}

describe('the Kubernetes client: one transport counts and retries every request', () => {
  let api: KubeApiStandin;
  before(async () => {
    api = await startKubeApiStandin();
  });
  after(() => api.close());
  beforeEach(() => {
    api.seen.length = 0;
    api.bodies.length = 0;
    api.fail.length = 0;
  });

  it('the table names every method of every resource client', () => {
    const k = new KubeClients(api.kubeconfig, NS);
    const methods = Object.entries(k)
      .filter(([field]) => field !== 'transport')
      .flatMap(([field, client]) =>
        Object.getOwnPropertyNames(Object.getPrototypeOf(client))
          .filter((m) => m !== 'constructor' && typeof (client as Record<string, unknown>)[m] === 'function')
          .map((m) => `${field}.${m}`),
      );
    const tested = new Set([...CALLS, ...WATCHES].map((c) => c.name));
    assert.deepEqual(
      methods.filter((m) => !tested.has(m)),
      [],
      'a method without a row below',
    );
    assert.equal(methods.length, tested.size);
  });

  for (const c of CALLS) {
    it(`${c.name}: one request, counted`, async () => {
      const k = new KubeClients(api.kubeconfig, NS);
      await c.call(k);
      assert.deepEqual(api.seen, [c.sent]);
      assert.equal(k.transport.requests, 1);
      assert.equal(k.transport.retries, 0);
    });

    it(`${c.name}: a 503 is retried in place, each try counted`, async () => {
      const k = new KubeClients(api.kubeconfig, NS, undefined, RETRY_AT_ONCE);
      api.fail.push(503);
      await c.call(k);
      assert.deepEqual(api.seen, [c.sent, c.sent]);
      assert.equal(api.bodies[0], api.bodies[1], 'the same request again');
      assert.equal(k.transport.requests, 2);
      assert.equal(k.transport.retries, 1);
    });

    it(`${c.name}: a 422 is permanent, sent once`, async () => {
      const k = new KubeClients(api.kubeconfig, NS, undefined, RETRY_AT_ONCE);
      api.fail.push(422);
      await assert.rejects(c.call(k), (err: DomainError) => {
        assert.equal(err.type, 'KubeInvalidObject');
        assert.equal(err.permanent, true);
        return true;
      });
      assert.deepEqual(api.seen, [c.sent]);
      assert.equal(k.transport.requests, 1);
      assert.equal(k.transport.retries, 0);
    });
  }

  it('without retry options a 503 fails at once, transient, for the activity to retry', async () => {
    const k = new KubeClients(api.kubeconfig, NS);
    api.fail.push(503);
    await assert.rejects(k.rayClusters.get('c1'), (err: DomainError) => {
      assert.equal(err.type, 'KubeApiUnavailable');
      assert.equal(err.permanent, false);
      return true;
    });
    assert.equal(k.transport.requests, 1);
  });

  it('a 403 names the verb and resource to grant, unretried; a 404 a caller expects is its answer', async () => {
    const k = new KubeClients(api.kubeconfig, NS, undefined, RETRY_AT_ONCE);
    api.fail.push(403);
    await assert.rejects(k.secrets.get('c1-ray-auth'), (err: unknown) => {
      assert.ok(isDomainError(err));
      assert.equal(err.type, 'KubePermissionDenied');
      assert.match(
        err.message,
        /kubeconfig user "tester" cannot get secrets\/c1-ray-auth in namespace standin-ns/,
      );
      return true;
    });
    api.fail.push(404);
    assert.equal(await k.secrets.get('c1-ray-auth'), undefined);
    api.fail.push(404);
    assert.deepEqual(await k.rayClusters.delete('c1'), { found: false });
    assert.equal(k.transport.requests, 3);
    assert.equal(k.transport.retries, 0);
  });

  it('a 409 on create reads the object back: two requests, both counted', async () => {
    const k = new KubeClients(api.kubeconfig, NS, undefined, RETRY_AT_ONCE);
    api.fail.push(409);
    const { created } = await k.rayClusters.create(rayCluster);
    assert.equal(created, false);
    assert.deepEqual(api.seen, [`POST ${RC}`, `GET ${RC}/c1`]);
    assert.equal(k.transport.requests, 2);
  });

  for (const w of WATCHES) {
    it(`${w.name}: counted once when opened, its events typed`, async () => {
      const k = new KubeClients(api.kubeconfig, NS, undefined, RETRY_AT_ONCE);
      const { events, err } = await watched(w, k);
      assert.deepEqual(api.seen, [w.sent]);
      assert.deepEqual(events, ['ADDED standin']);
      assert.equal(err, null);
      assert.equal(k.transport.requests, 1);
    });

    it(`${w.name}: a failed watch ends once, unretried (the cache re-lists on its next read)`, async () => {
      const k = new KubeClients(api.kubeconfig, NS, undefined, RETRY_AT_ONCE);
      api.fail.push(503);
      const { events, err } = await watched(w, k);
      assert.deepEqual(events, []);
      assert.equal((err as { statusCode?: number }).statusCode, 503);
      assert.equal(k.transport.requests, 1);
      assert.equal(k.transport.retries, 0);
    });
  }
});

describe('no request around the transport', () => {
  it('only the transport (and kubeconfig loading) imports values from @kubernetes/client-node', () => {
    const importsValues =
      /^import\s+(?!type\s)[^;]*from\s+'@kubernetes\/client-node'|import\('@kubernetes\/client-node'\)/m;
    const users = tsFilesUnder(REPO_ROOT, 'src').filter((f) =>
      importsValues.test(readFileSync(join(REPO_ROOT, f), 'utf8')),
    );
    assert.deepEqual(users, [
      'src/backends/kuberay/kube-client/transport.ts',
      'src/backends/kuberay/kube-config.ts',
    ]);
  });
});
