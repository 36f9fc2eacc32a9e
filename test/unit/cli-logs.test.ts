import assert from 'node:assert/strict';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { logSources } from '../../src/cli/logs.js';
import { runArchiveDir, trainLogPath } from '../../src/domain/spec/paths.js';
import { testSpec } from '../helpers/specs.js';

describe('logs: which log copies, in which order', () => {
  it("lists a campaign's attempts in order, each cluster of an attempt in order, with headings", async () => {
    const spec = testSpec({}, await mkdtemp(join(tmpdir(), 'logs-')));
    const put = async (id: string, cluster: string) => {
      const dir = runArchiveDir(spec.storage, spec.name, id);
      await mkdir(dir, { recursive: true });
      await writeFile(trainLogPath(dir, cluster), `${cluster}\n`);
      await writeFile(join(dir, 'manifest.json'), '{}');
    };
    await put('camp-a2', 'x-h-a0');
    await put('camp-a1', 'x-h-a10');
    await put('camp-a1', 'x-h-a9');
    await put('camp-a10', 'x-h-a0'); // not reached: attempt 3 is missing
    const sources = await logSources(spec, 'camp', 'campaign');
    assert.deepEqual(
      sources.map((s) => s.heading),
      [
        '== attempt 1 (camp-a1), cluster x-h-a9 ==',
        '== attempt 1 (camp-a1), cluster x-h-a10 ==',
        '== attempt 2 (camp-a2), cluster x-h-a0 ==',
      ],
    );
    await put('exp', 'x-h-a0');
    assert.deepEqual(
      (await logSources(spec, 'exp', 'experiment')).map((s) => s.heading),
      ['== cluster x-h-a0 =='],
    );
  });
});
