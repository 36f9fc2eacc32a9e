import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { excludeMatcher, treeSizeIssue } from '../../src/domain/code/code-tree.js';

describe('code.exclude patterns (a .gitignore subset)', () => {
  const cases: [string, string, boolean][] = [
    // pattern, path, left out
    ['*.ckpt', 'model.ckpt', true],
    ['*.ckpt', 'runs/a/model.ckpt', true],
    ['*.ckpt', 'model.ckpt.py', false],
    ['data/', 'data/x.bin', true],
    ['data/', 'src/data/x.bin', true],
    ['data/', 'data', false], // a file named data is not a folder
    ['/data', 'src/data/x.bin', false],
    ['/data', 'data/x.bin', true],
    ['docs/*.png', 'docs/a.png', true],
    ['docs/*.png', 'docs/img/a.png', false],
    ['docs/**/*.png', 'docs/img/a.png', true],
    ['**/outputs', 'a/b/outputs/log.txt', true],
    ['wandb', 'wandb/run-1/files/x', true],
    ['te?t.py', 'pkg/test.py', true],
    ['te?t.py', 'pkg/te/t.py', false],
    ['a+b.txt', 'a+b.txt', true],
    ['a+b.txt', 'aab.txt', false],
  ];
  for (const [pattern, path, out] of cases) {
    it(`${pattern} ${out ? 'leaves out' : 'keeps'} ${path}`, () => {
      assert.equal(excludeMatcher([pattern])(path), out);
    });
  }
  it('no patterns keep everything', () => {
    assert.equal(excludeMatcher([])('a/b.py'), false);
  });
});

describe('treeSizeIssue', () => {
  const limits = { maxSizeMb: 1, maxEntries: 100 };
  it('passes a tree under the limit', () => {
    assert.equal(treeSizeIssue('/t', [{ path: 'a.py', size: 999_999 }], limits), undefined);
  });
  it('names the total, the setting, the largest files and top-level folders, and the fix', () => {
    const files = [
      { path: 'train.py', size: 10_000 },
      { path: 'public/logo.png', size: 600_000 },
      { path: 'public/paper.pdf', size: 1_400_000 },
      { path: 'ragen/env.py', size: 70_000 },
    ];
    const msg = treeSizeIssue('/ragen', files, limits) ?? '';
    assert.match(msg, /add up to 2\.1 MB in 4 files, over code\.maxSizeMb=1/);
    assert.match(
      msg,
      /Largest files: public\/paper\.pdf \(1\.4 MB\), public\/logo\.png \(0\.6 MB\), ragen\/env\.py/,
    );
    assert.match(msg, /largest top-level entries: public\/ \(2\.0 MB\), ragen\/ \(0\.1 MB\), train\.py/);
    assert.match(msg, /code\.exclude .* or raise code\.maxSizeMb/);
  });
  it('refuses an empty tree and one over the entry limit', () => {
    assert.match(treeSizeIssue('/t', [], limits) ?? '', /no file to ship/);
    const many = Array.from({ length: 101 }, (_, i) => ({ path: `f${i}`, size: 1 }));
    assert.match(
      treeSizeIssue('/t', many, limits) ?? '',
      /101 files to ship, over the archive's limit of 100/,
    );
  });
});
