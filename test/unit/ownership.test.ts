import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LABELS } from '../../src/backends/kuberay/labels.js';
import { buildRayCluster } from '../../src/backends/kuberay/raycluster.js';
import { listQuery } from '../../src/cli/list-query.js';
import { owned } from '../../src/cli/owned.js';
import { experimentStart, sweepStart } from '../../src/cli/start-options.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { resolveOwnership } from '../../src/domain/usage/ownership.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { SearchAttributes as K } from '../../src/workflows/search-attributes.js';
import { UsageError } from '../../src/config/user-errors.js';
import { kuberaySpec, kuberaySpecYaml } from '../helpers/kuberay-specs.js';
import { seedSweep } from '../helpers/sweeps.js';
import { testSpec } from '../helpers/specs.js';

const osUser = () => 'os-user';

describe('owner and team of a run', () => {
  it('the flags win over the spec, the spec over the OS user and team default', () => {
    assert.deepEqual(resolveOwnership({}, {}, osUser), { owner: 'os-user', team: 'default' });
    assert.deepEqual(resolveOwnership({ owner: 'ana', team: 'nlp' }, {}, osUser), {
      owner: 'ana',
      team: 'nlp',
    });
    assert.deepEqual(resolveOwnership({ owner: 'ana', team: 'nlp' }, { owner: 'bob', team: 'rl' }, osUser), {
      owner: 'bob',
      team: 'rl',
    });
  });

  it('a bad value is refused naming where it came from, before anything starts', () => {
    assert.throws(
      () => owned(testSpec(), { team: 'team a' }),
      (err: Error) => {
        assert.ok(err instanceof UsageError);
        assert.match(err.message, /^--team "team a": use 1-63 letters, digits/);
        return true;
      },
    );
    assert.throws(
      () => resolveOwnership({}, {}, () => 'Dom\\ain'),
      /the OS user \(owner\) "Dom\\ain": .*; pass --owner$/,
    );
    // In the spec it is a spec error naming the field.
    assert.throws(
      () => parseExperimentSpec(`owner: -ana\n${kuberaySpecYaml('/mnt/shared')}`),
      (err: Error) => err instanceof SpecError && /owner: use 1-63 letters/.test(err.message),
    );
  });

  it('search attributes RagenOwner and RagenTeam at start (experiment and sweep), and list filters on them', () => {
    const spec = testSpec({ owner: 'ana', team: 'nlp' });
    const pairs = experimentStart(spec).typedSearchAttributes;
    assert.deepEqual(
      pairs.filter((p) => p.key.name === K.owner.name || p.key.name === K.team.name).map((p) => p.value),
      ['ana', 'nlp'],
    );
    const sweep = seedSweep([1]);
    const owned_ = { ...sweep, base: { ...sweep.base, owner: 'bob', team: 'rl' } };
    assert.deepEqual(
      sweepStart(owned_, 'sweep-1')
        .typedSearchAttributes.filter(
          (p) => p.key.name.startsWith('RagenOwner') || p.key.name === 'RagenTeam',
        )
        .map((p) => p.value),
      ['bob', 'rl'],
    );
    // A run started before owners existed carries none (its input has no owner).
    assert.ok(!experimentStart(testSpec()).typedSearchAttributes.some((p) => p.key.name === K.owner.name));
    assert.equal(
      listQuery({ owner: 'ana', team: 'nlp', running: false }),
      "RagenKind IS NOT NULL AND RagenOwner = 'ana' AND RagenTeam = 'nlp'",
    );
  });

  it('labels the RayCluster and every Pod template with the owner and team', () => {
    const rc = buildRayCluster({
      name: 'sokoban-test-abcd1234-a1',
      namespace: 'training',
      spec: { ...kuberaySpec('/mnt/shared'), owner: 'ana', team: 'nlp' },
      owner: { experiment: 'sokoban-test', workflowId: 'wf', runId: 'run', attempt: 0 },
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const spec = rc.spec as any;
    for (const labels of [
      rc.metadata.labels,
      spec.headGroupSpec.template.metadata.labels,
      ...spec.workerGroupSpecs.map(
        (g: { template: { metadata: { labels: object } } }) => g.template.metadata.labels,
      ),
    ]) {
      assert.equal(labels?.[LABELS.user], 'ana');
      assert.equal(labels?.[LABELS.team], 'nlp');
    }
  });
});
