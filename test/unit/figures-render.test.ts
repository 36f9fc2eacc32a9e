/** The placeholders of docs/figures.yaml (test/helpers/figures.ts): paths, arithmetic, lists, formats. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FigureError, evaluate, format, render } from '../helpers/figures.js';

const results = {
  commit: '58fd7a8385cb3d7d5b37a30ebfab2922e2f78bb2',
  date: '2026-12-07T05:01:33.851Z',
  numbers: {
    rows: [{ events: 84 }, { events: 85 }],
    medians: { 'total wall (s)': { rayjob: 196.833, product: 193.504 } },
    all: [2305, 84, 113, 82],
    success: [0.5, 0.9375, 0.9375],
  },
};

describe('figure placeholders', () => {
  it('reads paths: keys, quoted keys, indices, every element, slices', () => {
    assert.equal(evaluate('numbers.rows[1].events', results), 85);
    assert.equal(evaluate("numbers.medians['total wall (s)'].rayjob", results), 196.833);
    assert.deepEqual(evaluate('numbers.rows[*].events', results), [84, 85]);
    assert.deepEqual(evaluate('numbers.all[1:]', results), [84, 113, 82]);
  });

  it('computes: arithmetic with precedence, list functions, countOf', () => {
    assert.equal(evaluate('(numbers.rows[0].events + numbers.rows[1].events) / 2 - 1', results), 83.5);
    assert.equal(evaluate('max(numbers.all[1:])', results), 113);
    assert.equal(evaluate('median(numbers.all[*])', results), 98.5);
    assert.equal(evaluate('count(numbers.all[*])', results), 4);
    assert.equal(evaluate('countOf(numbers.success[*], 0.9375)', results), 2);
  });

  it('formats as the docs quote: decimals rounded half up, grouping, commits and days', () => {
    assert.equal(format(87.5, '.0', 'x'), '88');
    assert.equal(format(1.005, '.2', 'x'), '1.01'); // toFixed would say 1.00
    assert.equal(format(3786843 / 1048576, '.1', 'x'), '3.6');
    assert.equal(format(1296, ',', 'x'), '1,296');
    assert.equal(render('commit {commit|short} on {date|day}', results), 'commit 58fd7a8 on 2026-12-07');
    assert.equal(
      render("total wall {numbers.medians['total wall (s)'].product|.1} s", results),
      'total wall 193.5 s',
    );
  });

  it('refuses what it cannot quote exactly: a missing key, a fraction without decimals, a bad format', () => {
    assert.throws(() => render('{numbers.nothing}', results), FigureError);
    assert.throws(
      () => render("{numbers.medians['total wall (s)'].rayjob}", results),
      /say how many decimals/,
    );
    assert.throws(() => render('{numbers.rows[0].events|%}', results), /unknown format/);
    assert.throws(() => evaluate('numbers.rows[0].events +', results), FigureError);
  });
});
