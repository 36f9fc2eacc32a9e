import { createServer, type Server } from 'node:http';

/** STAND-INs for registry failures a real registry cannot be made to show on demand. */
export interface StandInServer {
  host: string;
  hits: () => number;
  stop(): Promise<void>;
}

async function listen(server: Server, counter: { n: number }): Promise<StandInServer> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    host: `127.0.0.1:${port}`,
    hits: () => counter.n,
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

/** STAND-IN: a registry front that answers 503 to everything (an overloaded or broken registry). */
export function startUnavailableRegistryStandIn(): Promise<StandInServer> {
  const counter = { n: 0 };
  return listen(
    createServer((_req, res) => {
      counter.n++;
      res.writeHead(503).end('service unavailable');
    }),
    counter,
  );
}

/**
 * STAND-IN: a proxy in front of the real registry that rewrites Docker-Content-Digest on manifest
 * answers (a tampering or misconfigured proxy); the body is passed on unchanged.
 */
export function startDigestRewritingProxyStandIn(
  upstream: string,
  fakeDigest: string,
): Promise<StandInServer> {
  const counter = { n: 0 };
  return listen(
    createServer((req, res) => {
      counter.n++;
      void (async () => {
        const up = await fetch(`${upstream}${req.url ?? '/'}`, {
          headers: { accept: req.headers.accept ?? '*/*' },
        });
        const headers: Record<string, string> = {};
        up.headers.forEach((v, k) => (headers[k] = v));
        if ((req.url ?? '').includes('/manifests/')) headers['docker-content-digest'] = fakeDigest;
        delete headers['content-encoding'];
        delete headers['content-length'];
        res.writeHead(up.status, headers).end(Buffer.from(await up.arrayBuffer()));
      })().catch((err: unknown) => res.writeHead(502).end(String(err)));
    }),
    counter,
  );
}
