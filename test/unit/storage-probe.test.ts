import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deniedAccessFix, judgeStorageProbe, storageProbeArgv } from '../../src/domain/join/storage-probe.js';

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

describe('shared-storage proof: a Pod denied access (EACCES)', () => {
  const denied = {
    node: 'aaaa',
    ip: '10.0.0.4',
    ok: false,
    denied: true,
    uid: 1000,
    gid: 100,
    groups: [100],
    error:
      "cannot write the acknowledgement: [Errno 13] Permission denied: '/mnt/ragen/archive/x/wf/storage-probe-c/ack-aaaa'",
  };

  it('names the uid and gid the Pods run as, apart from a volume that is not shared', () => {
    const v = judgeStorageProbe({
      nonce,
      probeDir: dir,
      reports: [denied],
      acks: new Map(),
      expectedNodes: 1,
    });
    assert.equal(v.ok, false);
    assert.deepEqual(v.ok ? undefined : v.denied, {
      uid: 1000,
      gid: 100,
      groups: [100],
      nodes: ['10.0.0.4'],
    });
    assert.match(
      v.ok ? '' : v.problems.join('\n'),
      /running as uid 1000 gid 100, is denied access in .*Permission denied/,
    );
  });

  it('the fix names the folder owner and mode, fsGroup and the chgrp', () => {
    const fix = deniedAccessFix(
      { uid: 1000, gid: 100, groups: [100], nodes: ['10.0.0.4'] },
      { path: dir, uid: 0, gid: 0, mode: 0o42775 },
      '/mnt/ragen',
    );
    assert.match(fix, /run as uid 1000 gid 100 \(supplementary groups 100\) and may not write/);
    assert.match(fix, /owner uid 0 gid 0, mode 2775/);
    assert.match(fix, /set kuberay\.securityContext\.fsGroup/);
    assert.match(fix, /chgrp <gid> \/mnt\/ragen && chmod 2775 \/mnt\/ragen/);
  });

  it('the probe script tells a permission error from a missing file', () => {
    const script = storageProbeArgv(dir, nonce)[2] ?? '';
    assert.match(script, /errno\.EACCES, errno\.EPERM/);
    assert.match(script, /os\.getuid\(\)/);
  });
});
