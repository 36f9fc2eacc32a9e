import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rulesAllow } from '../../src/backends/kuberay/resource-rules.js';

describe('rulesAllow: what a SelfSubjectRulesReview confirms (preflight asks an access review for the rest)', () => {
  const rules = [
    { apiGroups: ['ray.io'], resources: ['rayclusters'], verbs: ['create', 'get'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['one-secret'] },
    { apiGroups: [''], resources: ['*'], verbs: ['list'] },
    { apiGroups: ['*'], resources: ['configmaps'], verbs: ['*'] },
  ];

  it('matches group, resource and verb, with * for any', () => {
    assert.equal(rulesAllow(rules, 'create', 'rayclusters', 'ray.io'), true);
    assert.equal(rulesAllow(rules, 'delete', 'rayclusters', 'ray.io'), false);
    assert.equal(rulesAllow(rules, 'create', 'rayclusters', ''), false, 'the core group is not ray.io');
    assert.equal(rulesAllow(rules, 'list', 'pods', ''), true);
    assert.equal(rulesAllow(rules, 'update', 'configmaps', ''), true);
  });

  it('a rule limited to named objects does not confirm a verb on the resource', () => {
    assert.equal(rulesAllow(rules, 'get', 'secrets', ''), false);
  });

  it('no rules confirm nothing', () => {
    assert.equal(rulesAllow([], 'get', 'pods', ''), false);
  });
});
