import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { probeReportedFailure } from '../../src/activities/join/allreduce.js';
import { probeImportFailure } from '../../src/activities/join/probe-import.js';

/**
 * Found by bench/soak.ts (seed 113): a worker node died during the all-reduce probe and the
 * campaign failed at once with ProbeUnavailable (not retried), because Ray's job message carries
 * the job's last logs, where the dying node's raylet printed "Runtime Env Agent network error", and
 * the probe's own failure line (no `path`) did not parse as a result.
 */
const nodeDiedLogs = [
  '(raylet) Runtime Env Agent network error: Disconnected: on_read bad version, the server may be still starting or is already failed.',
  '(raylet) The node with node id: e8f8 has been marked dead because the detector has missed too many heartbeats from it.',
  'ALLREDUCE_RESULT {"ok": false, "reason": "ActorDiedError: The actor died because its node has died.", "world_size": 2}',
].join('\n');

describe('all-reduce probe failures', () => {
  it('a node lost under the probe is not an import failure, whatever the job message quotes from the logs', () => {
    const message = `Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\n${nodeDiedLogs}`;
    assert.equal(probeImportFailure(nodeDiedLogs, message), undefined);
  });

  it("Ray's own runtime_env failure still is one, and so is an import error in the logs", () => {
    assert.match(
      probeImportFailure('', 'Failed to set up runtime_env: could not download gcs://x.zip') ?? '',
      /runtime_env/,
    );
    assert.match(
      probeImportFailure("ModuleNotFoundError: No module named 'numpy'", 'exit code 1') ?? '',
      /numpy/,
    );
  });

  it("the probe's failure line (ok false, no path) gives its reason; a success line gives none", () => {
    const line = /ALLREDUCE_RESULT (\{.*\})/.exec(nodeDiedLogs)?.[1] ?? '';
    assert.match(probeReportedFailure(line) ?? '', /ActorDiedError.*node has died/);
    assert.equal(probeReportedFailure('{"ok": true, "path": "ray-ring-numpy", "world_size": 2}'), undefined);
    assert.equal(probeReportedFailure('{not json'), undefined);
  });
});
