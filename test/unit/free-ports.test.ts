import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { freePorts } from '../../src/backends/local/ports.js';

/** Whether a server can listen on `port` on loopback now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('freePorts: the one free-port helper', () => {
  it('gives distinct ports that are free once it returns', async () => {
    const ports = await freePorts(4);
    assert.equal(new Set(ports).size, 4);
    for (const p of ports) assert.ok(await bindable(p), `port ${p} is not free`);
  });

  it('with below, only ports from 20000 up to the limit', async () => {
    const ports = await freePorts(6, { below: 32_768 });
    assert.equal(new Set(ports).size, 6);
    for (const p of ports) {
      assert.ok(p >= 20_000 && p < 32_768, `port ${p} is outside 20000..32767`);
      assert.ok(await bindable(p), `port ${p} is not free`);
    }
  });
});
