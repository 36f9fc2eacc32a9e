import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ErrorTypes } from '../../src/domain/failures/error-types.js';
import * as patches from '../../src/workflows/patches.js';
import { allHistories, currentRelease } from '../helpers/history-corpus.js';
import {
  type HistoryJson,
  childFailureTypes,
  patchMarkers,
  readHistory,
  resultOf,
  scheduledActivities,
  workflowTypeOf,
} from '../helpers/history-events.js';

/**
 * For each patch id, when a history shows that its run reached the `patched()` call: events that
 * only happen once the code has passed that call (or is at it), whichever branch it then took.
 * A rule may miss a history that did reach it, never name one that did not.
 */
const REACHES: Record<string, { rule: string; reaches: (h: HistoryJson) => boolean }> = {
  [patches.TEAM_BUDGET]: {
    rule: 'an experiment (called as it starts)',
    reaches: (h) => workflowTypeOf(h) === 'experiment',
  },
  [patches.STORAGE_PROOF_ALONGSIDE_CHECKS]: {
    rule: 'proveSharedStorage scheduled (a KubeRay cluster joined; both branches prove it)',
    reaches: (h) => scheduledActivities(h).includes('proveSharedStorage'),
  },
  [patches.KUEUE_QUEUED_STAGE]: {
    rule: 'awaitAdmission scheduled (a cluster in a Kueue queue; both branches wait for it)',
    reaches: (h) => scheduledActivities(h).includes('awaitAdmission'),
  },
  [patches.CAMPAIGN_PREEMPTION]: {
    rule: 'a campaign whose attempt failed ClusterPreempted',
    reaches: (h) =>
      workflowTypeOf(h) === 'campaign' && childFailureTypes(h).includes(ErrorTypes.ClusterPreempted),
  },
  [patches.HASHING_DURING_TEARDOWN]: {
    rule: 'an experiment that submitted a cluster and completed with training succeeded or earlyStopped',
    reaches: (h) => {
      const r = resultOf(h) as { submits?: number; training?: { outcome?: string } } | undefined;
      return (
        workflowTypeOf(h) === 'experiment' &&
        (r?.submits ?? 0) > 0 &&
        ['succeeded', 'earlyStopped'].includes(r?.training?.outcome ?? '')
      );
    },
  },
};

const ids: string[] = Object.values(patches);
const corpus = allHistories().map((h) => {
  const json = readHistory(h.path);
  return { name: `${h.release}/${h.file}`, json, markers: new Set(patchMarkers(json).map((m) => m.id)) };
});

/** CONTRIBUTING.md's patch table: id → [added, deprecatePatch, removed] (a release, or never). */
function patchTable(): Map<string, string[]> {
  const text = readFileSync(new URL('../../CONTRIBUTING.md', import.meta.url), 'utf8');
  const section = text.split('\n## ').find((s) => s.startsWith('Patches and their retirement')) ?? '';
  return new Map(
    section
      .split('\n')
      .filter((l) => /^\|\s*`[a-z0-9-]+`\s*\|/.test(l))
      .map((l) => l.split('|').map((c) => c.trim()))
      .map((cells) => [cells[1]!.replace(/`/g, ''), cells.slice(2, 5)] as const),
  );
}
const table = patchTable();
const release = currentRelease();
/** Whether the step planned for `at` is due in this release. */
const due = (at: string | undefined): boolean =>
  at !== undefined && at !== 'never' && byVersion(at, release) <= 0;
const workflowCode = readdirSync(new URL('../../src/workflows/', import.meta.url))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(new URL(`../../src/workflows/${f}`, import.meta.url), 'utf8'))
  .join('\n');

describe('patch coverage: each patch id has a recorded history on each side of its call', () => {
  it('has a rule for every id of src/workflows/patches.ts, and no rule for an id that is gone', () => {
    assert.deepEqual(Object.keys(REACHES).sort(), [...ids].sort());
  });

  it('knows every marker the histories carry', () => {
    const carried = new Set(corpus.flatMap((h) => [...h.markers]));
    assert.deepEqual(
      [...carried].filter((id) => !ids.includes(id)),
      [],
    );
  });

  for (const [name, id] of Object.entries(patches)) {
    const { rule, reaches } = REACHES[id] ?? { rule: '', reaches: () => false };
    const deprecated = due(table.get(id)?.[1]);
    it(`${id}: reached (${rule}) with its marker, and ${deprecated ? 'never' : 'also'} without it`, () => {
      const reached = corpus.filter((h) => reaches(h.json));
      const without = reached.filter((h) => !h.markers.has(id)).map((h) => h.name);
      const withIt = reached.filter((h) => h.markers.has(id)).map((h) => h.name);
      assert.ok(withIt.length > 0, `no history takes ${id}'s new branch: record one from the current code`);
      if (!deprecated)
        assert.ok(without.length > 0, `no history reaches ${id} without its marker: record one before it`);
      else assert.deepEqual(without, [], `${id} is deprecated in ${release}: these take its old branch`);
    });

    it(`${id}: the rule recognises every history that carries the marker (it was reached there)`, () => {
      const missed = corpus.filter((h) => h.markers.has(id) && !reaches(h.json)).map((h) => h.name);
      assert.deepEqual(missed, []);
    });

    if (deprecated)
      it(`${id}: deprecated in this release, so called through deprecatePatch (the old branch gone)`, () => {
        assert.doesNotMatch(workflowCode, new RegExp(`\\bpatched\\(${name}\\)`));
        assert.match(workflowCode, new RegExp(`\\bdeprecatePatch\\(${name}\\)`));
      });
  }

  it("CONTRIBUTING.md's patch table gives each id the release of each step, in order", () => {
    const version = /^\d+\.\d+\.\d+$/;
    for (const id of ids) {
      const steps = table.get(id);
      assert.ok(steps, `${id} has no row in CONTRIBUTING.md's patch table`);
      const [added, deprecated, removed] = steps;
      assert.match(added!, version, `${id}: the release that added it`);
      for (const step of [deprecated!, removed!])
        assert.match(step, /^(\d+\.\d+\.\d+|never)$/, `${id}: a release, or never (with the reason)`);
      const order = [added!, deprecated!, removed!].filter((s) => version.test(s));
      assert.deepEqual(order, [...order].sort(byVersion), `${id}: added, deprecated, removed in that order`);
      assert.ok(!due(removed), `${id} is to be removed in ${removed}: it is still in patches.ts`);
    }
    const gone = [...table.keys()].filter((id) => !ids.includes(id) && !due(table.get(id)?.[2]));
    assert.deepEqual(gone, [], 'rows for ids that are not in patches.ts and not yet due for removal');
  });
});

function byVersion(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  return pa[0]! - pb[0]! || pa[1]! - pb[1]! || pa[2]! - pb[2]!;
}
