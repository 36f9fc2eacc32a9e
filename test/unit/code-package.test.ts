import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { buildCodePackage } from '../../src/backends/ray/code-package.js';
import { loadConfig } from '../../src/config/config.js';
import { checkShippedCode } from '../../src/cli/spec-files/code-check.js';
import { shippedWorkingDir, snapshotCode } from '../../src/activities/code/code-shipping.js';
import { ExperimentSpecSchema } from '../../src/domain/spec/experiment.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { codePackageStorePath } from '../../src/domain/spec/paths.js';
import { listCodeTree, readCodeTree } from '../../src/provenance/code-tree.js';
import { FakeRayHead } from '../helpers/fake-ray-head.js';
import { testSpec } from '../helpers/specs.js';

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd });

/** Python's zipfile, as Ray unpacks packages: every CRC checked, names, contents and Unix modes. */
async function unzipWithPython(zip: Buffer): Promise<Record<string, { text: string; mode: string }>> {
  const dir = await mkdtemp(join(tmpdir(), 'code-zip-'));
  await writeFile(join(dir, 'p.zip'), zip);
  const script =
    'import json, sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nassert z.testzip() is None\n' +
    'print(json.dumps({i.filename: {"text": z.read(i).decode(), "mode": oct(i.external_attr >> 16)} for i in z.infolist()}))';
  const { stdout } = await run(loadConfig().python, ['-c', script, join(dir, 'p.zip')]);
  await rm(dir, { recursive: true });
  return JSON.parse(stdout) as Record<string, { text: string; mode: string }>;
}

/** A small checkout: tracked, ignored, untracked and executable files, and a folder to exclude. */
async function checkout(opts: { git: boolean }): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'code-tree-'));
  await mkdir(join(root, 'ragen', '__pycache__'), { recursive: true });
  await mkdir(join(root, 'data'), { recursive: true });
  await writeFile(join(root, '.gitignore'), '__pycache__/\n*.ckpt\n');
  await writeFile(join(root, 'train.py'), 'print("train")\n');
  await writeFile(join(root, 'run.sh'), '#!/bin/sh\n');
  await chmod(join(root, 'run.sh'), 0o755);
  await writeFile(join(root, 'ragen', '__init__.py'), 'X = 1\n');
  await writeFile(join(root, 'ragen', '__pycache__', 'x.pyc'), 'bytecode');
  await writeFile(join(root, 'model.ckpt'), 'weights');
  await writeFile(join(root, 'data', 'big.bin'), 'data');
  if (opts.git) {
    await git(root, 'init', '-q');
    await git(root, 'add', '-A');
    await git(root, 'commit', '-qm', 'init');
  }
  return root;
}

describe('the shipped tree: listed by git, packed deterministically', () => {
  it('lists what git would commit (.gitignore honoured), minus code.exclude; clean tree, its commit', async () => {
    const root = await checkout({ git: true });
    const tree = await listCodeTree(root, ['data/']);
    assert.equal(tree.listedBy, 'git');
    assert.deepEqual(
      tree.files.map((f) => f.path),
      ['.gitignore', 'ragen/__init__.py', 'run.sh', 'train.py'],
    );
    assert.equal(tree.files.find((f) => f.path === 'run.sh')?.executable, true);
    const { stdout: head } = await git(root, 'rev-parse', 'HEAD');
    assert.deepEqual(tree.git, { commit: head.trim(), dirty: false, diff: '', untracked: [] });
  });

  it('a dirty tree: the changed bytes ship, the diff and the untracked files are recorded, a deleted file is gone', async () => {
    const root = await checkout({ git: true });
    await writeFile(join(root, 'train.py'), 'print("changed")\n');
    await writeFile(join(root, 'ragen', 'new.py'), 'Y = 2\n');
    await rm(join(root, 'run.sh'));
    const tree = await listCodeTree(root, []);
    assert.deepEqual(
      tree.files.map((f) => f.path),
      ['.gitignore', 'data/big.bin', 'ragen/__init__.py', 'ragen/new.py', 'train.py'],
    );
    assert.equal(tree.git?.dirty, true);
    assert.match(tree.git?.diff ?? '', /-print\("train"\)\n\+print\("changed"\)/);
    assert.match(tree.git?.diff ?? '', /deleted file mode 100755/);
    assert.deepEqual(tree.git?.untracked, ['ragen/new.py']);
    const unpacked = await unzipWithPython(buildCodePackage(await readCodeTree(tree)).bytes);
    assert.equal(unpacked['train.py']?.text, 'print("changed")\n');
  });

  it('a subfolder of a work tree ships alone, with the repository commit and only its own changes', async () => {
    const root = await checkout({ git: true });
    await writeFile(join(root, 'train.py'), 'print("outside the subfolder")\n');
    const tree = await listCodeTree(join(root, 'ragen'), []);
    assert.deepEqual(
      tree.files.map((f) => f.path),
      ['__init__.py'],
    );
    assert.equal(tree.git?.dirty, false);
  });

  it('a tree outside git: its .gitignore still applies (through an empty scratch repository)', async () => {
    const root = await checkout({ git: false });
    const tree = await listCodeTree(root, ['/data']);
    assert.equal(tree.listedBy, 'git-ignore-rules');
    assert.deepEqual(
      tree.files.map((f) => f.path),
      ['.gitignore', 'ragen/__init__.py', 'run.sh', 'train.py'],
    );
    assert.equal(tree.git, undefined);
  });

  it('same tree, same bytes and name (whatever the order and the files mtimes); a changed byte, a new name', async () => {
    const root = await checkout({ git: false });
    const entries = await readCodeTree(await listCodeTree(root, []));
    const a = buildCodePackage(entries);
    await writeFile(join(root, 'train.py'), 'print("train")\n'); // same bytes, new mtime
    const b = buildCodePackage([...(await readCodeTree(await listCodeTree(root, [])))].reverse());
    assert.ok(a.bytes.equals(b.bytes), 'deterministic bytes');
    assert.match(a.name, /^_ray_pkg_[0-9a-f]{40}\.zip$/);
    assert.equal(a.uri, `gcs://${a.name}`);
    const unpacked = await unzipWithPython(a.bytes);
    assert.deepEqual(Object.keys(unpacked), [
      '.gitignore',
      'data/big.bin',
      'ragen/__init__.py',
      'run.sh',
      'train.py',
    ]);
    assert.equal(unpacked['run.sh']?.mode, '0o100755');
    assert.equal(unpacked['train.py']?.mode, '0o100644');
    await writeFile(join(root, 'train.py'), 'print("train!")\n');
    assert.notEqual(buildCodePackage(await readCodeTree(await listCodeTree(root, []))).name, a.name);
  });
});

describe('code in a spec: load-time checks and the run snapshot', () => {
  const withCode = (storage: string, code: Record<string, unknown>) =>
    ExperimentSpecSchema.parse({ ...testSpec({}, storage), code });

  it('the schema refuses a relative path and a limit over what Ray stores, naming the field', () => {
    const bad = ExperimentSpecSchema.safeParse({ ...testSpec(), code: { path: 'RAGEN', maxSizeMb: 600 } });
    assert.equal(bad.success, false);
    const fields = bad.error?.issues.map((i) => i.path.join('.'));
    assert.deepEqual(fields, ['code.path', 'code.maxSizeMb']);
    assert.match(bad.error?.issues[0]?.message ?? '', /absolute path/);
  });

  it('a missing path, a file, and a tree over code.maxSizeMb are SpecErrors naming the field and the fix', async () => {
    const storage = await mkdtemp(join(tmpdir(), 'code-spec-'));
    const root = await checkout({ git: false });
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [
        { path: join(root, 'nope') },
        'code.path',
        /does not exist on the worker's machine; point code.path at a checkout/,
      ],
      [
        { path: join(root, 'train.py') },
        'code.path',
        /is not a directory; point code.path at the top folder/,
      ],
      [
        { path: root, maxSizeMb: 0.00001 },
        'code.maxSizeMb',
        /over code\.maxSizeMb=0\.00001\. Largest files: /,
      ],
    ];
    for (const [code, field, message] of cases) {
      const err = await checkShippedCode(withCode(storage, code), 'spec.yaml').then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof SpecError, `${JSON.stringify(code)}: ${String(err)}`);
      assert.equal(err.issues[0]?.field, field);
      assert.match(err.issues[0]?.message ?? '', message);
    }
    await checkShippedCode(withCode(storage, { path: root }), 'spec.yaml');
  });

  it('packs once per run: a later edit does not change what the run ships; uploaded once per cluster', async () => {
    const storage = await mkdtemp(join(tmpdir(), 'code-run-'));
    const root = await checkout({ git: true });
    await writeFile(join(root, 'train.py'), 'print("edited")\n');
    const spec = withCode(storage, { path: root, exclude: ['data/'] });
    const runDir = join(storage, 'archive', 'run-1');
    const first = await snapshotCode(spec, runDir);
    assert.ok(first?.git?.dirty);
    assert.equal(first.git.diff, 'code.diff');
    assert.match(await readFile(join(runDir, 'code.diff'), 'utf8'), /\+print\("edited"\)/);
    assert.equal(first.files, 4);
    await writeFile(join(root, 'train.py'), 'print("edited again")\n');
    assert.deepEqual(await snapshotCode(spec, runDir), first, 'the record is read back, not re-packed');

    const head = new FakeRayHead();
    assert.equal(await shippedWorkingDir(head, spec, runDir), first.uri);
    assert.equal(await shippedWorkingDir(head, spec, runDir), first.uri);
    assert.deepEqual([...head.packages.keys()], [first.package]);
    const stored = await readFile(codePackageStorePath(spec.storage.archiveDir, first.package));
    assert.ok(head.packages.get(first.package)?.equals(stored));
    assert.equal((await unzipWithPython(stored))['train.py']?.text, 'print("edited")\n');
    assert.equal(
      await shippedWorkingDir(head, testSpec({}, storage), runDir),
      undefined,
      'no code, no working_dir',
    );
  });
});
