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

/** Reserve `count` distinct free TCP ports on the host by binding port 0, then release them together. */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listenOn(0, host));
    return servers.map(portOf);
  } finally {
    await closeAll(servers);
  }
}

/**
 * Like freePorts, but below `limit`, for programs that store a port in a narrower type than the
 * kernel's ephemeral range (32768 and up) needs: random candidates from 20000 up, held together
 * until all are found so none repeats.
 */
export async function freePortsBelow(count: number, limit: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
  try {
    while (servers.length < count) {
      const port = 20_000 + Math.floor(Math.random() * (limit - 20_000));
      // Taken (or held already by this call): try another.
      const server = await listenOn(port, host).catch(() => undefined);
      if (server) servers.push(server);
    }
    return servers.map(portOf);
  } finally {
    await closeAll(servers);
  }
}
