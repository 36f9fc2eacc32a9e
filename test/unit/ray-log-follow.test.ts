import { setTimeout as sleep } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { followBytes, RayHttpError } from '../../src/backends/ray/http.js';

describe('followBytes (a streamed log over HTTP)', () => {
  it('hands over chunks as they come, ends once, and rejects a non-2xx answer with its body', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/missing')
        return res.writeHead(500).end('A file is not found at: /x/job-driver-y.log');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('line 1\n');
      setTimeout(() => res.end('line 2\npartial'), 50);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const chunks: string[] = [];
      let ends = 0;
      await new Promise<void>((resolve, reject) => {
        followBytes(
          `${base}/log`,
          (c) => chunks.push(c.toString()),
          () => {
            ends++;
            resolve();
          },
        ).catch(reject);
      });
      await sleep(20);
      assert.equal(chunks.join(''), 'line 1\nline 2\npartial');
      assert.ok(chunks.length >= 2, 'the first chunk came before the answer ended');
      assert.equal(ends, 1);
      await assert.rejects(
        followBytes(
          `${base}/missing`,
          () => undefined,
          () => undefined,
        ),
        (err) => err instanceof RayHttpError && err.status === 500 && /not found/.test(err.body),
      );
    } finally {
      server.close();
    }
  });
});
