import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveProvenance } from '../../src/provenance/git.js';
import { modelRevisionOf } from '../../src/provenance/model.js';
import { expectedFingerprint, writeModelDir } from '../helpers/model-dir.js';
import { kuberaySpec } from '../helpers/kuberay-specs.js';

describe("the model's revision in the provenance", () => {
  it('a directory: sha256 of config.json and the weight index, as the probe computes it; a hub model: its commit', async () => {
    const root = await mkdtemp(join(tmpdir(), 'model-rev-'));
    try {
      const { dir, files } = await writeModelDir(join(root, 'qwen'));
      assert.equal(await modelRevisionOf({ path: dir }), expectedFingerprint(files));
      assert.equal(await modelRevisionOf({ path: join(root, 'absent') }), undefined);
      const hub = { hub: 'Qwen/Q', revision: 'a'.repeat(40), hfHome: '/mnt/hf' };
      assert.equal(await modelRevisionOf(hub), `Qwen/Q@${'a'.repeat(40)}`);
      // kuberay needs a model revision: the spec's model now gives it.
      const spec = { ...kuberaySpec(root), model: { path: dir } };
      assert.equal((await resolveProvenance(spec)).modelRevision, expectedFingerprint(files));
      const unreadable = { ...kuberaySpec(root), model: { path: join(root, 'absent') } };
      assert.match((await resolveProvenance(unreadable)).modelRevision, /fingerprinted on the nodes/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
