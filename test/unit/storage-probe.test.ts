import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judgeStorageProbe, storageProbeArgv } from '../../src/domain/storage-probe.js';

const nonce = 'n'.repeat(32);
const dir = '/mnt/ragen/archive/x/wf/storage-probe-c';
const report = (node: string, ok = true, error?: string) => ({
  node,
  ip: `10.0.0.${node.length}`,
  ok,
  ...(error ? { error } : {}),
});

describe('shared-storage proof (pure verdict)', () => {
  it('passes when every node read the nonce and the worker sees every acknowledgement', () => {
    const acks = new Map([
      ['aaaa', `${nonce} aaaa`],
      ['bbbbbb', `${nonce} bbbbbb`],
    ]);
    assert.deepEqual(
      judgeStorageProbe({
        nonce,
        probeDir: dir,
        reports: [report('aaaa'), report('bbbbbb')],
        acks,
        expectedNodes: 2,
      }),
      { ok: true, nodes: 2 },
    );
  });

  it('names the Ray node that cannot read the worker file, and the ack the worker cannot see', () => {
    const v = judgeStorageProbe({
      nonce,
      probeDir: dir,
      reports: [
        report('aaaa', false, 'cannot read the nonce: [Errno 2] No such file or directory'),
        report('bbbbbb'),
      ],
      acks: new Map(),
      expectedNodes: 2,
    });
    assert.equal(v.ok, false);
    const text = v.ok ? '' : v.problems.join('\n');
    assert.match(
      text,
      /Ray node 10\.0\.0\.4 \(aaaa\) does not see the worker's file \/mnt\/ragen\/archive\/x\/wf\/storage-probe-c\/nonce: cannot read the nonce/,
    );
    assert.match(
      text,
      /the orchestrator's worker does not see .*ack-bbbbbb, written by Ray node 10\.0\.0\.6/,
    );
  });

  it('refuses a stale acknowledgement and a node that did not run the probe', () => {
    const v = judgeStorageProbe({
      nonce,
      probeDir: dir,
      reports: [report('aaaa')],
      acks: new Map([['aaaa', 'old aaaa']]),
      expectedNodes: 3,
    });
    const text = v.ok ? '' : v.problems.join('\n');
    assert.match(text, /only 1 of 3 Ray nodes ran the probe/);
    assert.match(text, /another run's content/);
  });

  it('passes the directory and nonce as separate arguments (quoted later, never a shell string)', () => {
    const argv = storageProbeArgv('/mnt/with space/dir', nonce);
    assert.deepEqual([argv[0], argv[1], argv[3], argv[4]], ['python', '-c', '/mnt/with space/dir', nonce]);
    assert.match(argv[2] ?? '', /NodeAffinitySchedulingStrategy\(n\["NodeID"\], soft=False\)/);
  });
});
