import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createVerify } from '../../src/activities/verify/verify.js';
import { CODE_LABELS, imageCode } from '../../src/registry/code-labels.js';
import { codeCommits } from '../../src/domain/code/code-commits.js';
import { fakeBackend, FakeRayHead, readyCluster } from '../helpers/fake-ray-head.js';
import { kuberaySpec, TEST_IMAGE } from '../helpers/kuberay-specs.js';
import { testInput } from '../helpers/specs.js';

const ragen = 'a'.repeat(40);
const verl = 'b'.repeat(40);
const provenance = testInput().provenance;

describe('provenance of the trained code from the image', () => {
  it('reads the OCI revision, RAGEN and verl labels and the WORKDIR', () => {
    const labels = {
      [CODE_LABELS.revision]: ragen,
      [CODE_LABELS.source]: 'https://github.com/mll-lab-nu/RAGEN',
      [CODE_LABELS.verlCommit]: verl,
      'io.ray.version': '2.60.0',
    };
    assert.deepEqual(imageCode({ labels, env: [], workingDir: '/opt/ragen' }), {
      revision: ragen,
      source: 'https://github.com/mll-lab-nu/RAGEN',
      verlCommit: verl,
      workingDir: '/opt/ragen',
    });
  });

  it('names each commit for what it is: the image code on kuberay, this repo on local, and the orchestrator', () => {
    const image = {
      verified: true,
      note: '',
      code: { revision: ragen, ragenCommit: ragen, verlCommit: verl },
    };
    const kuberay = codeCommits({ backend: 'kuberay' }, provenance, image);
    assert.deepEqual(kuberay.trainedCode, {
      from: 'image-labels',
      commit: ragen,
      repository: undefined,
      ragenCommit: ragen,
      verlCommit: verl,
    });
    assert.deepEqual(kuberay.orchestrator, { commit: provenance.repoCommit, dirty: false, version: '0.0.0' });
    assert.equal(
      codeCommits({ backend: 'kuberay' }, provenance, { verified: true, note: '', code: {} }).trainedCode
        .from,
      'unknown',
    );
    assert.deepEqual(
      codeCommits({ backend: 'local' }, provenance, { verified: false, note: '' }).trainedCode.commit,
      provenance.repoCommit,
    );
  });

  it('the verify stage records the labels it read from the image config', async () => {
    const spec = { ...kuberaySpec('/mnt/shared'), rayVersion: '2.60.0' };
    const deps = {
      backends: {
        kuberay: {
          ...fakeBackend(() => readyCluster(2, 2)),
          kind: 'kuberay' as const,
          plannedRayVersion: async () => undefined,
        },
      },
      rayHead: () => new FakeRayHead(),
      reportProgress: async () => undefined,
      workflowStatus: async () => undefined,
      pollIntervalMs: 10,
      imageRegistry: {
        inspect: async () => ({
          digest: TEST_IMAGE.split('@')[1]!,
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          platformManifestDigest: TEST_IMAGE.split('@')[1]!,
          configDigest: 'sha256:c',
          config: {
            labels: { [CODE_LABELS.ragenCommit]: ragen, [CODE_LABELS.verlCommit]: verl },
            env: [],
            workingDir: '/opt/ragen',
          },
        }),
      },
    };
    const result = (await new MockActivityEnvironment().run(createVerify(deps), { spec })) as {
      image: { code?: unknown };
    };
    assert.deepEqual(result.image.code, { ragenCommit: ragen, verlCommit: verl, workingDir: '/opt/ragen' });
  });
});
