import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../src/config/config.js';
import type { Manifest } from '../../src/domain/run/manifest.js';

const run = promisify(execFile);

/**
 * A local copy of the toy payload, committed to a git repository of its own and then changed (not
 * committed): every process that imports ragen_toy from the copy appends its argv to a marker file
 * on storage the Ray nodes share. The repository's own payload (installed in the venv) has no such
 * line, so a marker line proves the shipped copy is what ran.
 */
export async function changedPayloadCopy(
  parent: string,
): Promise<{ root: string; commit: string; ran: () => Promise<string[]> }> {
  const root = join(parent, 'payload-copy');
  const markers = join(parent, 'code-markers');
  await cp(join(REPO_ROOT, 'payload'), root, {
    recursive: true,
    filter: (src) => !/__pycache__|\.egg-info|\.pytest_cache/.test(src),
  });
  const git = (...args: string[]) =>
    run('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: root });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'the payload as in the repository');
  const commit = (await git('rev-parse', 'HEAD')).stdout.trim();
  // The Ray Pods' user (kuberay) may not be the worker's: the marker folder is everyone's.
  await chmod(parent, 0o755);
  await mkdir(markers, { recursive: true });
  await chmod(markers, 0o777);
  const marker = join(markers, 'ran.txt');
  const init = join(root, 'ragen_toy', '__init__.py');
  await writeFile(
    init,
    `${await readFile(init, 'utf8')}
# CHANGED IN THE LOCAL COPY: record who imported this copy.
import sys as _sys
try:
    with open(${JSON.stringify(marker)}, "a") as _f:
        _f.write(__file__ + " " + " ".join(_sys.argv) + "\\n")
except OSError:
    pass
`,
  );
  const ran = async () =>
    (await readFile(marker, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
  return { root, commit, ran };
}

/**
 * The manifest says the changed copy shipped (its commit, dirty, the diff next to the manifest),
 * and each of `drivers` (named by an argument only its argv has, such as `--episodes` for the
 * payload's validator) imported ragen_toy from Ray's unpacked working_dir (`…/_ray_pkg_<sha1>/…`),
 * never from the repository's payload.
 */
export async function assertShippedCopyRan(
  manifest: Manifest,
  copy: { root: string; commit: string; ran: () => Promise<string[]> },
  drivers: string[],
): Promise<void> {
  const code = manifest.code;
  assert.equal(code?.from, 'shipped', JSON.stringify(code));
  assert.equal(code.path, copy.root);
  assert.deepEqual(code.git && { commit: code.git.commit, dirty: code.git.dirty }, {
    commit: copy.commit,
    dirty: true,
  });
  assert.equal(manifest.commits?.trainedCode.from, 'shipped-tree');
  assert.equal(manifest.commits?.trainedCode.commit, copy.commit);
  const runDir = dirname(manifest.validation.resultsPath ?? '');
  const diff = await readFile(join(runDir, code.git?.diff ?? 'missing'), 'utf8');
  assert.match(diff, /\+# CHANGED IN THE LOCAL COPY/);
  const unpacked = `/_ray_pkg_${code.package.replace(/^_ray_pkg_|\.zip$/g, '')}/`;
  const lines = await copy.ran();
  for (const driver of drivers) {
    assert.ok(
      lines.some((l) => l.split(' ')[0]?.includes(unpacked) && l.includes(` ${driver}`)),
      `${driver} ran from the shipped copy (${unpacked}); marker lines:\n${lines.join('\n')}`,
    );
  }
  assert.ok(!lines.some((l) => l.includes(join(REPO_ROOT, 'payload'))), lines.join('\n'));
}
