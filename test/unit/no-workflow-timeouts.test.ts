import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('teardown guarantees', () => {
  it('no workflow of the product sets a run or execution timeout (they skip cleanup; deadlines are timers)', async () => {
    const offenders: string[] = [];
    for (const file of await sources('src')) {
      const text = await readFile(file, 'utf8');
      if (/workflow(Run|Execution)Timeout/.test(text)) offenders.push(file);
    }
    assert.deepEqual(offenders, []);
  });
});
