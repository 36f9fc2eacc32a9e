import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PART_BYTES, partBytesFor } from '../../src/activities/object-store/object-store-upload.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

describe('multipart part size', () => {
  it('is 8 MiB up to 10,000 parts, then the whole MiB that keeps a file within 10,000 parts', () => {
    assert.equal(PART_BYTES, 8 * MiB);
    assert.equal(partBytesFor(80 * MiB), 8 * MiB);
    assert.equal(partBytesFor(78 * GiB), 8 * MiB);
    for (const size of [79 * GiB, 100 * GiB, 1024 * GiB]) {
      const part = partBytesFor(size);
      assert.ok(Math.ceil(size / part) <= 10_000, `${size} bytes in ${part}-byte parts`);
      assert.equal(part % MiB, 0);
      assert.ok(part - MiB < size / 10_000, 'no larger than needed');
    }
    assert.equal(partBytesFor(80 * MiB, 5 * MiB), 5 * MiB, 'a smaller base is kept where it fits');
  });
});
