import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { NotificationEvent } from '../../src/domain/tracking/notification.js';

/** A local HTTP receiver: every POST by path, answering 503 to the first `failFirst` of each path. */
export class Receiver {
  posts: { path: string; key?: string; status: number; event: NotificationEvent }[] = [];
  failFirst = 0;
  private server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      const seen = this.posts.filter((p) => p.path === path).length;
      const status = seen < this.failFirst ? 503 : 200;
      this.posts.push({
        path,
        key: req.headers['idempotency-key'] as string | undefined,
        status,
        event: JSON.parse(body) as NotificationEvent,
      });
      res.writeHead(status).end();
    });
  });
  url = '';
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }
  delivered(path: string) {
    return this.posts.filter((p) => p.path === path && p.status === 200).map((p) => p.event);
  }
  stop() {
    return new Promise((r) => this.server.close(r));
  }
}
