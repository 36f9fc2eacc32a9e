import assert from 'node:assert/strict';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from '../../src/config/config.js';
import { validSpecYaml } from '../helpers/specs.js';
import { cli, closedPort } from '../helpers/cli-process.js';

// The cases run at once (each spawns its own processes): two of them wait out the client's 10 s
// connect deadline, and one after another the file took 30 s, the slowest unit file.
describe('CLI parsing (commander + a zod schema per command)', { concurrency: true }, () => {
  it('--version prints the package version and exits 0', async () => {
    const { version } = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const r = await cli(['--version']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), version);
  });

  it('--help exits 0, at the top and per command', async () => {
    for (const args of [
      ['--help'],
      ['run', '--help'],
      ['schedule', 'create', '--help'],
      ['campaign', 'extend', '--help'],
    ]) {
      const r = await cli(args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^Usage: ragen-orchestrator/, args.join(' '));
    }
    assert.match((await cli(['reaper', 'install', '--help'])).stdout, /--every <seconds>/);
  });

  it('an unknown flag is an error (exit 2) with a suggestion, not silently ignored', async () => {
    const r = await cli(['run', '--embeded', 'examples/sokoban-local.yaml']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown option '--embeded'/);
    assert.match(r.stderr, /Did you mean --embedded\?/);
    assert.equal(r.stdout, '');
  });

  it('a flag without its value, a bad value, a missing argument or an unknown command exits 2', async () => {
    const cases: [string[], RegExp][] = [
      [['reaper', 'install', '--every'], /option '--every <seconds>' argument missing/],
      [
        ['reaper', 'install', '--every', 'soon'],
        /reaper install: --every: expected a number of seconds > 0, got 'soon'/,
      ],
      [['reaper', 'install', '--grace', '-5'], /--grace: expected a number of seconds >= 0, got '-5'/],
      [
        ['schedule', 'create', 'nightly', 'examples/sokoban-sweep.yaml', '--cron'],
        /option '--cron <expr>' argument missing/,
      ],
      [
        ['campaign', 'extend', 'c-1', 'many'],
        /campaign extend: <steps>: give the number of extra steps as a positive integer/,
      ],
      [['status'], /missing required argument 'workflow-id'/],
      [['deploy'], /unknown command 'deploy'/],
      [[], /Usage: ragen-orchestrator/],
    ];
    for (const [args, expected] of cases) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, expected, args.join(' '));
    }
  });

  it('a spec file that does not exist is one line naming the path and the fix (exit 2)', async () => {
    for (const command of ['run', 'sweep', 'campaign']) {
      const r = await cli([command, 'examples/no-such-spec.yaml']);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /no spec file at 'examples\/no-such-spec\.yaml': give the path of a YAML spec/);
    }
  });

  it('a spec value of the wrong type says what was given and what is expected', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cli-spec-'));
    const file = join(dir, 'half-second.yaml');
    await writeFile(file, validSpecYaml(dir).replace('joinSeconds: 60', 'joinSeconds: 0.5'));
    const r = await cli(['run', file], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /deadlines\.joinSeconds: expected an integer, got 0\.5/);
  });

  it('an unreachable Temporal server is one line naming the address and the fix, no stack (exit 1)', async () => {
    const port = await closedPort();
    for (const args of [['status', 'experiment-x']]) {
      const r = await cli(args, { TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
      assert.equal(r.code, 1, r.stderr);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0] ?? '',
        new RegExp(`cannot reach the Temporal server at 127\\.0\\.0\\.1:${port} .*TEMPORAL_ADDRESS`),
      );
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }
  });

  it('RAGEN_DEBUG=1 adds the stack to the same failure', async () => {
    const r = await cli(['status', 'x'], {
      TEMPORAL_ADDRESS: `127.0.0.1:${await closedPort()}`,
      RAGEN_DEBUG: '1',
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /\n\s+at /);
  });

  it('a profile that does not exist is one line naming it (exit 2)', async () => {
    const r = await cli(['status', 'x'], { TEMPORAL_PROFILE: 'nowhere' });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /Profile 'nowhere' not found.*fix the file or TEMPORAL_PROFILE/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});
