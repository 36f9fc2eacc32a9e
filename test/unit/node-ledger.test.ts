import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { linkFindings } from '../../src/activities/node-health/link-suspects.js';
import { NodeLedgerFile } from '../../src/backends/local/node-ledger-file.js';
import { assignSlots } from '../../src/backends/local/slots.js';
import { slowLinkStandin } from '../helpers/slow-link-standin.js';
import { AVOIDED_NODES_ANNOTATION, buildRayCluster } from '../../src/backends/kuberay/raycluster.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import {
  EMPTY_LEDGER,
  clearSuspects,
  liveSuspects,
  parseLedger,
  recordFindings,
} from '../../src/domain/node-health/node-ledger.js';
import { kuberaySpecYaml } from '../helpers/kuberay-specs.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const t0 = new Date('2026-12-06T00:00:00Z');
const hours = (h: number) => new Date(t0.getTime() + h * 3600_000);
const finding = (node: string, workflowId = 'wf-1') => ({ node, reason: 'slow', workflowId, cluster: 'c-1' });

describe('node ledger', () => {
  it('records a finding for the TTL, refreshes a known node and drops expired ones', () => {
    let ledger = recordFindings(EMPTY_LEDGER, [finding('n1'), finding('n2')], t0, 24);
    assert.deepEqual(
      liveSuspects(ledger, hours(23)).map((s) => s.node),
      ['n1', 'n2'],
    );
    assert.deepEqual(liveSuspects(ledger, hours(24)), []);
    ledger = recordFindings(ledger, [finding('n1', 'wf-2')], hours(20), 24);
    const n1 = ledger.suspects.find((s) => s.node === 'n1')!;
    assert.equal(n1.findings, 2);
    assert.equal(n1.since, t0.toISOString());
    assert.equal(n1.expires, hours(44).toISOString());
    assert.equal(n1.workflowId, 'wf-2');
    // n2 expires at 24 h: a write after that leaves it out.
    assert.deepEqual(
      recordFindings(ledger, [], hours(30), 24).suspects.map((s) => s.node),
      ['n1'],
    );
  });

  it('clears named nodes or all, and says which it cleared', () => {
    const ledger = recordFindings(EMPTY_LEDGER, [finding('n1'), finding('n2')], t0, 24);
    const one = clearSuspects(ledger, ['n2', 'nx'], hours(1));
    assert.deepEqual(one.cleared, ['n2']);
    assert.deepEqual(
      one.ledger.suspects.map((s) => s.node),
      ['n1'],
    );
    assert.deepEqual(clearSuspects(ledger, [], hours(1)).ledger, EMPTY_LEDGER);
  });

  it('refuses a malformed stored ledger naming where it is', () => {
    assert.deepEqual(parseLedger(undefined, 'x'), EMPTY_LEDGER);
    assert.throws(
      () => parseLedger('{', '/r/node-suspects.json'),
      /node ledger \/r\/node-suspects.json is not JSON/,
    );
    assert.throws(() => parseLedger('{"suspects":[{}]}', 'cm'), /node ledger cm is malformed/);
  });

  it('the local file keeps every finding of concurrent writers', async () => {
    const store = new NodeLedgerFile(mkdtempSync(join(tmpdir(), 'ledger-')));
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.update((l) => recordFindings(l, [finding(`n${i}`)], new Date(), 1)),
      ),
    );
    assert.equal((await store.read()).suspects.length, 20);
  });

  it('a corrupt local file is an error, never silently emptied', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ledger-'));
    writeFileSync(join(root, 'node-suspects.json'), 'not json');
    await assert.rejects(
      new NodeLedgerFile(root).update((l) => l),
      /is not JSON/,
    );
  });
});

describe('exclusion', () => {
  it('local: the suspect slots are not started; too few left is undefined', () => {
    assert.deepEqual(assignSlots(3, ['local-slot-1']), [0, 2, 3]);
    assert.deepEqual(assignSlots(2, []), [0, 1]);
    const all = Array.from({ length: 14 }, (_, s) => `local-slot-${s}`);
    assert.deepEqual(assignSlots(1, all), [14]);
    assert.equal(assignSlots(2, all), undefined);
    const slow = slowLinkStandin([1, 3]);
    assert.deepEqual(
      [0, 1, 2, 3].map((s) => Object.keys(slow(s)).length),
      [0, 1, 0, 1],
    );
  });

  it('kuberay: every Pod gets NotIn on the suspects, the RayCluster names them, all Pods get their node name', () => {
    const spec = parseExperimentSpec(kuberaySpecYaml('/mnt/shared'));
    const owner = { experiment: spec.name, workflowId: 'wf-1', runId: 'r', attempt: 1 };
    const rc: any = buildRayCluster({
      name: 'c',
      namespace: 'ns',
      spec,
      owner,
      avoidNodes: ['gpu-7', 'gpu-9'],
    });
    assert.equal(rc.metadata.annotations[AVOIDED_NODES_ANNOTATION], 'gpu-7,gpu-9');
    const templates = [
      rc.spec.headGroupSpec.template,
      ...rc.spec.workerGroupSpecs.map((g: any) => g.template),
    ];
    for (const t of templates) {
      const terms =
        t.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
      assert.deepEqual(terms, [
        {
          matchExpressions: [
            { key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['gpu-7', 'gpu-9'] },
          ],
        },
      ]);
      assert.deepEqual(
        t.spec.containers[0].env.find((e: any) => e.name === 'RAGEN_ORCH_NODE_NAME'),
        { name: 'RAGEN_ORCH_NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      );
    }
    const plain: any = buildRayCluster({ name: 'c', namespace: 'ns', spec, owner });
    assert.equal(plain.metadata.annotations[AVOIDED_NODES_ANNOTATION], undefined);
    assert.equal(plain.spec.workerGroupSpecs[0].template.spec.affinity?.nodeAffinity, undefined);
  });

  it("the probe's suspects become findings under their node name (the IP when it has none)", () => {
    const handle = {
      backend: 'local' as const,
      name: 'c-1',
      owner: { experiment: 'e', workflowId: 'wf-9', runId: 'r', attempt: 0 },
    };
    const line = JSON.stringify({
      ok: false,
      links: {
        median_gbps: 1.5,
        suspects: [
          { node_name: 'local-slot-1', node_ip: '127.0.0.2', best_gbps: 0.02 },
          { node_name: null, node_ip: '10.0.0.7', best_gbps: 0 },
        ],
      },
    });
    assert.deepEqual(linkFindings(line, handle), [
      {
        node: 'local-slot-1',
        reason: "best link 0.02 GB/s, the median node's 1.5 GB/s",
        workflowId: 'wf-9',
        cluster: 'c-1',
      },
      { node: '10.0.0.7', reason: 'did not answer the link test', workflowId: 'wf-9', cluster: 'c-1' },
    ]);
    assert.deepEqual(linkFindings('{"ok":true}', handle), []);
  });
});
