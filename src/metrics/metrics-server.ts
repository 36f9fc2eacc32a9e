import { type Server, createServer } from 'node:http';
import type { Registry } from 'prom-client';

export interface MetricsServerOptions {
  port: number;
  host?: string;
  registry: Registry;
  /** The SDK's own exposition (Runtime telemetry, Prometheus on a loopback port), appended to ours. */
  sdkMetricsUrl?: string;
  /** Readiness: the worker is running and polling (its state is RUNNING). */
  ready: () => boolean;
}

/**
 * One HTTP server for operators: /metrics (the product's metrics, then the Temporal SDK's, fetched
 * from the SDK's internal exporter: their names do not overlap, ragen_* against temporal_*),
 * /healthz (liveness: the process answers) and /readyz (readiness: the worker is polling).
 */
export async function startMetricsServer(
  opts: MetricsServerOptions,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = opts.ready();
      res
        .writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' })
        .end(ready ? 'ready\n' : 'not ready\n');
    } else if (path === '/metrics') {
      exposition(opts).then(
        (text) => res.writeHead(200, { 'content-type': opts.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(`metrics: ${String(err)}\n`),
      );
    } else {
      res.writeHead(404).end('not found: /metrics, /healthz, /readyz\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : opts.port };
}

async function exposition(opts: MetricsServerOptions): Promise<string> {
  const ours = await opts.registry.metrics();
  if (!opts.sdkMetricsUrl) return ours;
  // The SDK's exporter down is not our metrics down: serve ours with a comment saying so.
  const sdk = await fetch(opts.sdkMetricsUrl, { signal: AbortSignal.timeout(2000) })
    .then((r) => (r.ok ? r.text() : `# temporal sdk metrics: HTTP ${r.status}\n`))
    .catch((err: unknown) => `# temporal sdk metrics unavailable: ${String(err)}\n`);
  return `${ours.endsWith('\n') ? ours : `${ours}\n`}${sdk}`;
}
