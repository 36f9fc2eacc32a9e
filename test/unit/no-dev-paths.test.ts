import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../scripts/check-no-dev-paths.sh', import.meta.url));
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Runs the check on a fresh git repository whose tracked file `f.txt` holds `text`. */
function check(text: string, untracked = ''): { status: number | null; out: string } {
  const repo = mkdtempSync(join(tmpdir(), 'no-dev-paths-'));
  dirs.push(repo);
  execFileSync('git', ['init', '-q'], { cwd: repo });
  writeFileSync(join(repo, 'f.txt'), text);
  execFileSync('git', ['add', 'f.txt'], { cwd: repo });
  if (untracked) writeFileSync(join(repo, 'untracked.txt'), untracked);
  const r = spawnSync('bash', [script, repo], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('scripts/check-no-dev-paths.sh', () => {
  for (const [what, text] of [
    ['the workplace tree', 'data in /work/shared/conformance here\n'],
    ['the workplace alone', "const root = '/work';\n"],
    ['a mirror in the workplace', 'default /work/.mirror/volcengine+verl/repo\n'],
    ["a person's home", 'see /home/alice/notes.md\n'],
    ['a macOS home', 'cd /Users/bob/src\n'],
    ["a folder in root's home", 'export CACHE=/root/.cache/ragen\n'],
    ['a stack frame', '"at create (/srv/ci/old/src/workflows/experiment.ts:476:27)"\n'],
    ['a stack frame as a URL', '    at file:///var/build/x/test/a.test.ts:9:3\n'],
    ['a Python frame', '  File "/opt/venv/lib/python3.11/site.py", line 3, in <module>\n'],
  ]) {
    it(`fails on ${what}, naming the file and line`, () => {
      const { status, out } = check(`first line\n${text}`);
      assert.equal(status, 1, out);
      assert.match(out, /^f\.txt:2:/m);
    });
  }

  it('passes paths every machine or container has, relative paths and URLs', () => {
    const text = [
      'src/workflows/experiment.ts and test/workflows/replay.test.ts',
      'https://example.com/work/x and /workspace/x and ~/.cache/ragen-orchestrator/k8s',
      '/usr/bin/python3, /dev/shm, /proc/self/status, /var/run/secrets/kubernetes.io/serviceaccount',
      'runRoot = `/tmp/ro-it-${process.pid}`; HOME: uid === 0 ? "/root" : "/home/ray"',
      '/home/ray/anaconda3 on PATH; path: /home/me/RAGEN; mountPath: /mnt/ragen',
      'at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      'at create (src/workflows/experiment.ts:476:27)',
    ].join('\n');
    const { status, out } = check(text);
    assert.equal(status, 0, out);
  });

  it('reads tracked files only', () => {
    assert.equal(check('clean\n', 'scratch in /work/tmp\n').status, 0);
  });
});
