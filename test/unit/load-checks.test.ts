import assert from 'node:assert/strict';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { trainArgv } from '../../src/domain/ragen/entrypoint.js';
import { resumeLossWarning } from '../../src/domain/checkpoints/resume-loss.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { cli, closedPort } from '../helpers/cli-process.js';
import { validSpecYaml } from '../helpers/specs.js';

/** validSpecYaml has totalTrainingSteps 20 and saveFreq 10. */
const withSaveFreq = (value: string, dir?: string) =>
  validSpecYaml(dir).replace('  saveFreq: 10', `  saveFreq: ${value}`);

describe('load-time checks: storage, saveFreq, a campaign resume loss', () => {
  it('saveFreq greater than totalTrainingSteps is refused, naming the field and both fixes', () => {
    assert.throws(
      () => parseExperimentSpec(withSaveFreq('40')),
      (err: unknown) =>
        err instanceof SpecError &&
        /trainer\.saveFreq: 40 is more than totalTrainingSteps \(20\).*at most 20, or 'final'/.test(
          err.message,
        ),
    );
    assert.equal(parseExperimentSpec(withSaveFreq('20')).trainer.saveFreq, 20);
  });

  it("saveFreq: final is one save at the end: RAGEN's trainer.save_freq = total steps", () => {
    const spec = parseExperimentSpec(withSaveFreq('final'));
    assert.equal(spec.trainer.saveFreq, 20);
    assert.ok(trainArgv(spec, '/ckpt', { mode: 'disable' }).includes('trainer.save_freq=20'));
    assert.throws(() => parseExperimentSpec(withSaveFreq('last')), /trainer\.saveFreq/);
  });

  it('a campaign resume that can lose more than a quarter of the run is warned, not refused', () => {
    assert.equal(resumeLossWarning({ saveFreq: 5, totalTrainingSteps: 20 }), undefined);
    assert.equal(resumeLossWarning({ saveFreq: 6, totalTrainingSteps: 20 }), undefined); // loses 5 = 25%
    assert.match(
      resumeLossWarning({ saveFreq: 10, totalTrainingSteps: 20 }) ?? '',
      /^warning: trainer\.saveFreq 10 of 20 steps: a resume can lose up to 9 steps \(45% .*25% bound\); set trainer\.saveFreq to 5 or less/,
    );
    assert.match(resumeLossWarning({ saveFreq: 20, totalTrainingSteps: 20 }) ?? '', /lose up to 19 steps/);
  });

  it('campaign: the warning line, then the start goes on (here to an unreachable server: exit 1, not 2)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'load-checks-'));
    await writeFile(join(dir, 'c.yaml'), validSpecYaml(dir));
    const r = await cli(['campaign', join(dir, 'c.yaml')], {
      TEMPORAL_ADDRESS: `127.0.0.1:${await closedPort()}`,
    });
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.match(lines[0] ?? '', /^warning: trainer\.saveFreq 10 of 20 steps/);
    assert.match(lines[1] ?? '', /cannot reach the Temporal server/);
  });

  it('local backend: a storage directory this machine cannot create or write is exit 2 before anything starts', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'load-checks-'));
    const spec = validSpecYaml(dir).replace(`archiveDir: ${dir}/archive`, 'archiveDir: /proc/ragen-archive');
    await writeFile(join(dir, 'bad.yaml'), spec);
    for (const command of ['run', 'campaign']) {
      const r = await cli([command, join(dir, 'bad.yaml')], {
        TEMPORAL_ADDRESS: `127.0.0.1:${await closedPort()}`,
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /storage\.archiveDir: '\/proc\/ragen-archive' cannot be created or written on this machine \(ENOENT\)/,
      );
      assert.doesNotMatch(r.stderr, /cannot reach/);
    }
    // The writable one was probed and left as found: created, no probe file left behind.
    assert.deepEqual(await readdir(join(dir, 'checkpoints')), []);
  });
});
