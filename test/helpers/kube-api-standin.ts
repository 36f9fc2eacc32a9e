import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * A stand-in Kubernetes API server for the transport's unit test: it records each request
 * (`METHOD /path?query`) and answers the statuses queued in `fail` first, then 200 with one object
 * that every reader of the product accepts (an empty list, a served v1 CRD, a bound claim, allowed
 * reviews). A watch gets one ADDED event, then the stream ends. The real API server's answers are
 * the kube integration tests' (test/helpers/kube-env.ts).
 */
export interface KubeApiStandin {
  kubeconfig: KubeConfig;
  /** Every request received, in order: `METHOD /path?query`, and the Content-Type of a PATCH. */
  seen: string[];
  /** The request bodies, in the same order ('' for none). */
  bodies: string[];
  /** Statuses to answer the next requests with, before the normal answers (`shift`ed per request). */
  fail: number[];
  close(): Promise<void>;
}

const ANSWER = {
  apiVersion: 'v1',
  kind: 'StandIn',
  metadata: { name: 'standin', resourceVersion: '7' },
  items: [],
  spec: { versions: [{ name: 'v1', served: true, storage: true }], accessModes: ['ReadWriteMany'] },
  status: {
    phase: 'Bound',
    accessModes: ['ReadWriteMany'],
    allowed: true,
    incomplete: false,
    resourceRules: [],
  },
  groups: [],
};

export async function startKubeApiStandin(): Promise<KubeApiStandin> {
  const seen: string[] = [];
  const bodies: string[] = [];
  const fail: number[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://standin');
    const patch = req.method === 'PATCH' ? ` ${req.headers['content-type']}` : '';
    seen.push(`${req.method} ${url.pathname}${url.search}${patch}`);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString());
      const status = fail.shift();
      res.setHeader('Content-Type', 'application/json');
      if (status !== undefined) {
        res.statusCode = status;
        res.end(
          JSON.stringify({ kind: 'Status', status: 'Failure', code: status, message: `stand-in ${status}` }),
        );
      } else if (url.searchParams.get('watch') === 'true') {
        res.end(`${JSON.stringify({ type: 'ADDED', object: ANSWER })}\n`);
      } else {
        res.end(JSON.stringify(ANSWER));
      }
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromOptions({
    clusters: [{ name: 'standin', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'tester', token: 'standin-token' }],
    contexts: [{ name: 'standin', cluster: 'standin', user: 'tester' }],
    currentContext: 'standin',
  });
  return {
    kubeconfig,
    seen,
    bodies,
    fail,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
