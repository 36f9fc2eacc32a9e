import { execFile } from 'node:child_process';
import { type Server, type Socket, connect, createServer } from 'node:net';
import { promisify } from 'node:util';
import { KUBE_ENV } from './environment.js';
import { BRIDGE } from './pod-network.js';

const run = promisify(execFile);

/**
 * Part of the stand-in kubelet: a stand-in for kube-proxy, for the one Service a Pod reaches
 * outside the Pods: `kubernetes`, the API server. Its ClusterIP (the first address of
 * kube-apiserver's --service-cluster-ip-range, and in the serving certificate) is put on the
 * stand-in's bridge, where every Pod's default route goes, and forwarded to the API server on
 * loopback. In-cluster clients get it as KUBERNETES_SERVICE_HOST/PORT.
 */
export const KUBERNETES_SERVICE_IP = `${KUBE_ENV.serviceSubnetPrefix}.1`;
export const KUBERNETES_SERVICE_PORT = 443;

export interface Forward {
  close(): Promise<void>;
}

/** Plain TCP from listenHost:listenPort to targetHost:targetPort, one connection per connection. */
export async function tcpForward(
  listen: { host: string; port: number },
  target: { host: string; port: number },
): Promise<Forward> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = connect(target.port, target.host);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, resolve);
  });
  return {
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The `kubernetes` Service for the Pods: its ClusterIP on the bridge, forwarded to the API server. */
export async function startApiServerProxy(apiServer: string): Promise<Forward> {
  const url = new URL(apiServer);
  await run('ip', ['addr', 'replace', `${KUBERNETES_SERVICE_IP}/32`, 'dev', BRIDGE]);
  return tcpForward(
    { host: KUBERNETES_SERVICE_IP, port: KUBERNETES_SERVICE_PORT },
    { host: url.hostname, port: Number(url.port || 443) },
  );
}
