import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headUsesTokenAuth } from '../../src/backends/kuberay/auth-secret.js';
import { buildRayCluster } from '../../src/backends/kuberay/raycluster.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { rayOlderThan } from '../../src/domain/cluster/ray-auth.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { kuberaySpecYaml } from '../helpers/kuberay-specs.js';
import { validSpecYaml } from '../helpers/specs.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const owner = { experiment: 'sokoban-test', workflowId: 'wf-1', runId: 'run-1', attempt: 0 };
const withRay = (yaml: string, version: string) =>
  yaml.replace(/^rayVersion: .*$/m, `rayVersion: ${version}`);

function issues(yaml: string): { field: string; message: string }[] {
  try {
    parseExperimentSpec(yaml);
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    return err.issues;
  }
  return [];
}

describe('Ray token auth against the image Ray version (load time)', () => {
  // [what, spec YAML, the issue's field (undefined: accepted), its message]
  const table: [string, string, string | undefined, RegExp?][] = [
    [
      'Ray 2.49 on kuberay without auth: refused',
      withRay(kuberaySpecYaml(), '2.49.0'),
      'auth',
      /rayVersion 2\.49\.0 has no token authentication \(Ray 2\.52\.0 added it\).*write auth: none/,
    ],
    ['Ray 2.51.9 with auth: token: refused', `${withRay(kuberaySpecYaml(), '2.51.9')}auth: token\n`, 'auth'],
    ['Ray 2.49 with auth: none: accepted', `${withRay(kuberaySpecYaml(), '2.49.0')}auth: none\n`, undefined],
    ['Ray 2.52.0 without auth: accepted', withRay(kuberaySpecYaml(), '2.52.0'), undefined],
    [
      'auth: none on the local backend: refused',
      `${validSpecYaml()}auth: none\n`,
      'auth',
      /applies to the kuberay backend only/,
    ],
  ];
  for (const [what, yaml, field, message] of table)
    it(what, () => {
      const found = issues(yaml).find((i) => i.field === 'auth');
      assert.equal(found?.field, field, JSON.stringify(issues(yaml)));
      if (message) assert.match(found?.message ?? '', message);
    });

  it('compares versions by number', () => {
    assert.equal(rayOlderThan('2.9.0', '2.52.0'), true);
    assert.equal(rayOlderThan('2.52.0', '2.52.0'), false);
    assert.equal(rayOlderThan('3.0.0', '2.52.0'), false);
  });

  it('auth: none builds Pods without the token settings; the resolved spec (the manifest) keeps auth: none', () => {
    const spec = parseExperimentSpec(`${withRay(kuberaySpecYaml(), '2.49.0')}auth: none\n`);
    assert.equal(spec.auth, 'none');
    const rc = buildRayCluster({ name: 'c-a0', namespace: 'ns', spec, owner }).spec as any;
    const containers = [rc.headGroupSpec, ...rc.workerGroupSpecs].map(
      (g: any) => g.template.spec.containers[0],
    );
    for (const c of containers)
      assert.ok(!JSON.stringify(c.env ?? []).includes('RAY_AUTH'), JSON.stringify(c.env));
    const withToken = buildRayCluster({
      name: 'c-a0',
      namespace: 'ns',
      spec: parseExperimentSpec(kuberaySpecYaml()),
      owner,
    }).spec as any;
    assert.ok(JSON.stringify(withToken.headGroupSpec).includes('RAY_AUTH_MODE'));
  });

  it('the built RayCluster tells whether a token Secret exists (no Secret GET per dashboard call with auth: none)', () => {
    const build = (yaml: string) =>
      buildRayCluster({ name: 'c-a0', namespace: 'ns', spec: parseExperimentSpec(yaml), owner });
    assert.equal(headUsesTokenAuth(build(kuberaySpecYaml())), true);
    assert.equal(headUsesTokenAuth(build(`${withRay(kuberaySpecYaml(), '2.49.0')}auth: none\n`)), false);
    assert.equal(headUsesTokenAuth({ spec: {} }), false);
  });
});
