import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { PartHasher } from '../../src/activities/part-hasher.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();

describe('PartHasher (sha256 of parts and of the whole file, on a worker thread)', () => {
  it("gives each part's digest and the same bytes back, and the whole file's over all parts in order", async () => {
    const parts = [randomBytes(3 << 20), randomBytes(1 << 20), randomBytes(12_345)];
    const hasher = new PartHasher();
    try {
      for (const original of parts) {
        const copy = Buffer.allocUnsafeSlow(original.length);
        original.copy(copy);
        const { body, digest } = await hasher.part(copy);
        assert.equal(copy.length, 0, 'the buffer given was transferred, not copied');
        assert.ok(body.equals(original));
        assert.ok(digest.equals(sha256(original)));
      }
      assert.equal(await hasher.whole(), createHash('sha256').update(Buffer.concat(parts)).digest('hex'));
    } finally {
      await hasher.close();
    }
  });

  it("refuses a buffer from Node's shared pool (transferring it would take other buffers' memory)", async () => {
    const hasher = new PartHasher();
    try {
      const pooled = Buffer.from('small');
      await assert.rejects(hasher.part(pooled), /allocUnsafeSlow/);
      assert.equal(pooled.toString(), 'small');
    } finally {
      await hasher.close();
    }
  });
});
