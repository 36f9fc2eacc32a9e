import { createServer, type Server } from 'node:net';

/** A server listening on `port` (0: the kernel picks one); rejects with the listen error. */
async function listenOn(port: number, host: string): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port bound');
  return address.port;
}

async function closeAll(servers: Server[]): Promise<void> {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
}

/**
 * Reserve `count` distinct free TCP ports on loopback, then release them together: the one way
 * this project finds free ports. By default the kernel picks them (binding port 0). With `below`,
 * for programs that store a port in a narrower type than the kernel's ephemeral range (32768 and
 * up) needs: random candidates from 20000 up to `below`, held together until all are found so none
 * repeats.
 */
export async function freePorts(count: number, opts: { below?: number } = {}): Promise<number[]> {
  const host = '127.0.0.1';
  const { below } = opts;
  const servers: Server[] = [];
  try {
    while (servers.length < count) {
      if (below === undefined) {
        servers.push(await listenOn(0, host));
        continue;
      }
      const port = 20_000 + Math.floor(Math.random() * (below - 20_000));
      // Taken (or held already by this call): try another.
      const server = await listenOn(port, host).catch(() => undefined);
      if (server) servers.push(server);
    }
    return servers.map(portOf);
  } finally {
    await closeAll(servers);
  }
}
