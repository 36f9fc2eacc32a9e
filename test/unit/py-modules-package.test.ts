import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { probeImportFailure } from '../../src/activities/join/probe-import.js';
import { buildPyModulesPackage } from '../../src/backends/ray/py-modules.js';
import { storedZip } from '../../src/backends/ray/stored-zip.js';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';

const run = promisify(execFile);

/** Python's zipfile (what Ray unpacks packages with) lists the archive and checks every CRC. */
async function readWithPython(zip: Buffer): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'zip-'));
  const path = join(dir, 'p.zip');
  await writeFile(path, zip);
  const script =
    'import json, sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\nprint(json.dumps({i.filename: z.read(i).decode() for i in z.infolist()}))';
  const { stdout } = await run(loadConfig().python, ['-c', script, path]);
  return JSON.parse(stdout) as Record<string, string>;
}

describe('stored zip and py_modules package', () => {
  it('writes a zip that Python reads back entry for entry, CRCs checked', async () => {
    const zip = storedZip([
      { name: 'pkg/__init__.py', data: Buffer.from('') },
      { name: 'pkg/sub/mod.py', data: Buffer.from('X = "é"\n') },
    ]);
    assert.deepEqual(await readWithPython(zip), { 'pkg/__init__.py': '', 'pkg/sub/mod.py': 'X = "é"\n' });
  });

  it('refuses entry names that would escape the unpack directory', () => {
    for (const name of ['/abs.py', 'a/../../b.py', 'a\\b.py', ''])
      assert.throws(() => storedZip([{ name, data: Buffer.alloc(0) }]), /bad zip entry name/);
  });

  it('packs ragen_probes deterministically under its package directory, named by the sha1 of the zip', async () => {
    const a = await buildPyModulesPackage(join(REPO_ROOT, 'probes'), 'ragen_probes');
    const b = await buildPyModulesPackage(join(REPO_ROOT, 'probes'), 'ragen_probes');
    assert.ok(a.bytes.equals(b.bytes), 'the same sources give the same bytes');
    assert.equal(a.name, `_ray_pkg_${createHash('sha1').update(a.bytes).digest('hex')}.zip`);
    assert.equal(a.uri, `gcs://${a.name}`);
    assert.ok(
      a.files.includes('ragen_probes/__init__.py') && a.files.includes('ragen_probes/allreduce.py'),
      a.files.join(', '),
    );
    assert.deepEqual(Object.keys(await readWithPython(a.bytes)), a.files);
  });

  it('ships only sources: no bytecode caches or hidden files; a changed file changes the name', async () => {
    const root = await mkdtemp(join(tmpdir(), 'pkg-'));
    await mkdir(join(root, 'p', '__pycache__'), { recursive: true });
    await writeFile(join(root, 'p', '__init__.py'), 'A = 1\n');
    await writeFile(join(root, 'p', '__pycache__', 'x.cpython-311.pyc'), 'bytecode');
    await writeFile(join(root, 'p', '.hidden.py'), '');
    await writeFile(join(root, 'p', 'notes.txt'), '');
    const first = await buildPyModulesPackage(root, 'p');
    assert.deepEqual(first.files, ['p/__init__.py']);
    await writeFile(join(root, 'p', '__init__.py'), 'A = 2\n');
    assert.notEqual((await buildPyModulesPackage(root, 'p')).name, first.name);
  });

  it('refuses a directory that is not a Python package', async () => {
    const root = await mkdtemp(join(tmpdir(), 'pkg-'));
    await mkdir(join(root, 'p'));
    await writeFile(join(root, 'p', 'mod.py'), '');
    await assert.rejects(buildPyModulesPackage(root, 'p'), /no __init__\.py/);
  });
});

describe('probeImportFailure', () => {
  it('finds the import error in the job log, with a Ray log prefix', () => {
    const logs =
      'Traceback (most recent call last):\n  File "<frozen runpy>", line 189\n(raylet) ModuleNotFoundError: No module named \'numpy\'\n';
    assert.equal(
      probeImportFailure(logs, 'Job entrypoint command failed with exit code 1'),
      "(raylet) ModuleNotFoundError: No module named 'numpy'",
    );
  });

  it('names a failed runtime_env setup from the job message', () => {
    assert.match(
      probeImportFailure('', 'Job failed due to an application error: runtime_env setup failed: ...') ?? '',
      /runtime_env setup failed/,
    );
  });

  it('is undefined for other failures (a wrong sum, a hang, a crash)', () => {
    assert.equal(
      probeImportFailure(
        'ALLREDUCE_RESULT {"ok": false}\nRuntimeError: boom',
        'Job entrypoint command failed with exit code 4',
      ),
      undefined,
    );
  });
});
