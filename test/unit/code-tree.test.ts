import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { excludeMatcher, treeSizeIssue } from '../../src/domain/code/code-tree.js';

/** Whether git itself leaves `path` out under a .gitignore of `patterns` (an untracked file, as listed). */
function gitLeavesOut(patterns: readonly string[], path: string): boolean {
  const repo = mkdtempSync(join(tmpdir(), 'exclude-vs-git-'));
  try {
    execFileSync('git', ['init', '-q'], { cwd: repo });
    writeFileSync(join(repo, '.gitignore'), `${patterns.join('\n')}\n`);
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), '');
    const listed = execFileSync('git', ['ls-files', '-z', '--others', '--exclude-standard'], { cwd: repo });
    return !listed.toString().split('\0').includes(path);
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

describe('code.exclude patterns (.gitignore semantics)', () => {
  const cases: [string[], string, boolean][] = [
    // patterns, path, left out
    [['*.ckpt'], 'model.ckpt', true],
    [['*.ckpt'], 'runs/a/model.ckpt', true],
    [['*.ckpt'], 'model.ckpt.py', false],
    // A trailing / matches folders only, at any depth unless anchored.
    [['data/'], 'data/x.bin', true],
    [['data/'], 'src/data/x.bin', true],
    [['data/'], 'data', false],
    // A leading or inner / anchors at the top.
    [['/data'], 'src/data/x.bin', false],
    [['/data'], 'data/x.bin', true],
    [['doc/frotz'], 'doc/frotz/a.txt', true],
    [['doc/frotz'], 'a/doc/frotz/a.txt', false],
    [['docs/*.png'], 'docs/a.png', true],
    [['docs/*.png'], 'docs/img/a.png', false],
    // ** across folders: leading, inner (zero or more folders) and trailing.
    [['**/outputs'], 'a/b/outputs/log.txt', true],
    [['docs/**/*.png'], 'docs/img/a.png', true],
    [['docs/**/*.png'], 'docs/a.png', true],
    [['a/**/b'], 'a/x/y/b', true],
    [['a/**/b'], 'c/a/x/b', false],
    [['abc/**'], 'abc/d/e.txt', true],
    [['wandb'], 'wandb/run-1/files/x', true],
    [['te?t.py'], 'pkg/test.py', true],
    [['te?t.py'], 'pkg/te/t.py', false],
    [['a+b.txt'], 'a+b.txt', true],
    [['a+b.txt'], 'aab.txt', false],
    [['[ab].txt'], 'b.txt', true],
    // ! re-includes what an earlier pattern left out; the last matching pattern decides.
    [['*.log', '!keep.log'], 'keep.log', false],
    [['*.log', '!keep.log'], 'run/a.log', true],
    [['!keep.log', '*.log'], 'keep.log', true],
    [['logs/*', '!logs/keep.log'], 'logs/keep.log', false],
    // ... but not under a folder that is left out as a whole.
    [['logs/', '!logs/keep.log'], 'logs/keep.log', true],
    // A backslash makes a leading ! or # literal; a # line is a comment.
    [['\\!bang.txt'], '!bang.txt', true],
    [['#notes.txt'], '#notes.txt', false],
    [['\\#notes.txt'], '#notes.txt', true],
  ];
  for (const [patterns, path, out] of cases) {
    it(`${patterns.join(' ')} ${out ? 'leaves out' : 'keeps'} ${path}, as git does`, () => {
      assert.equal(excludeMatcher(patterns)(path), out);
      assert.equal(gitLeavesOut(patterns, path), out, 'git itself disagrees with the table');
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
