import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type EventLike, probeFailures } from '../../src/backends/kuberay/probe-failures.js';

/** An Unhealthy event as the kubelet records it for a Pod's container (pkg/kubelet/prober). */
function unhealthy(message: string, pod = 'c-head-x7k2p', container = 'ray-head'): EventLike {
  return {
    reason: 'Unhealthy',
    type: 'Warning',
    message,
    involvedObject: { kind: 'Pod', name: pod, fieldPath: `spec.containers{${container}}` },
  };
}

describe('probeFailures (kubelet Unhealthy events)', () => {
  const missing: [string, string][] = [
    ['Readiness probe failed: bash: line 1: wget: command not found\n', 'wget'],
    ['Liveness probe failed: bash: wget: command not found', 'wget'],
    ['Readiness probe failed: /bin/sh: 1: wget: not found', 'wget'],
    ['Readiness probe failed: sh: wget: not found', 'wget'],
    [
      'Liveness probe errored: rpc error: code = Unknown desc = failed to exec in container: failed to start exec "abc": OCI runtime exec failed: exec failed: unable to start container process: exec: "bash": executable file not found in $PATH: unknown',
      'bash',
    ],
    ['Readiness probe failed: /bin/bash: /usr/bin/wget: No such file or directory', 'wget'],
    ['Startup probe failed: bash: line 1: ray: command not found', 'ray'],
  ];
  for (const [message, exe] of missing) {
    it(`names ${exe} from: ${message.slice(0, 60)}`, () => {
      const [f, ...more] = probeFailures([unhealthy(message)]);
      assert.equal(more.length, 0);
      assert.equal(f?.type, 'ImageContractUnmet');
      assert.equal(f?.pod, 'c-head-x7k2p');
      assert.equal(f?.container, 'ray-head');
      assert.match(f!.message, new RegExp(`cannot run ${exe}`));
      assert.match(f!.message, /pod c-head-x7k2p/);
      assert.match(f!.message, /rayproject\/ray base/);
    });
  }

  const ordinary = [
    // Ray not up yet: wget ran and the raylet answered nothing (the usual first seconds).
    "Readiness probe failed: wget: can't connect to remote host (127.0.0.1): Connection refused",
    'Readiness probe failed: success',
    'Liveness probe failed: command timed out',
    'Readiness probe failed: HTTP probe failed with statuscode: 503',
    // wget itself reports a missing URL path: not a missing executable.
    'Readiness probe failed: wget: server returned error: HTTP/1.1 404 Not Found',
  ];
  for (const message of ordinary) {
    it(`ignores an ordinary probe failure: ${message.slice(0, 60)}`, () => {
      assert.deepEqual(probeFailures([unhealthy(message)]), []);
    });
  }

  it('ignores other reasons and objects, and names each Pod once however often the probe fails', () => {
    const msg = 'Readiness probe failed: bash: line 1: wget: command not found';
    assert.deepEqual(probeFailures([{ ...unhealthy(msg), reason: 'BackOff' }]), []);
    assert.deepEqual(probeFailures([{ ...unhealthy(msg), involvedObject: { kind: 'Node', name: 'n' } }]), []);
    const twice = probeFailures([
      unhealthy(msg),
      unhealthy(msg.replace('Readiness', 'Liveness')),
      unhealthy(msg, 'c-w-1', 'ray-worker'),
    ]);
    assert.deepEqual(
      twice.map((f) => [f.pod, f.container]),
      [
        ['c-head-x7k2p', 'ray-head'],
        ['c-w-1', 'ray-worker'],
      ],
    );
  });
});
