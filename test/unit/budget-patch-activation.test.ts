import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TypedSearchAttributes } from '@temporalio/common';
import type { PatchActivationInput } from '@temporalio/worker';
import { budgetPatchActivation, takesBudgetBranch } from '../../src/worker/budget-patch-activation.js';
import type { BudgetsFile } from '../../src/domain/budget/budgets.js';
import { HASHING_DURING_TEARDOWN, TEAM_BUDGET } from '../../src/workflows/patches.js';
import { SearchAttributes } from '../../src/workflows/search-attributes.js';

const budgets: BudgetsFile = { teams: { vision: { gpuHours: 50, period: 'day', policy: 'refuse' } } };

describe('takesBudgetBranch: a new run records the team-budget marker only when its team may have a budget', () => {
  it('no budgets file on the worker: no run is budgeted', () => {
    assert.equal(takesBudgetBranch(undefined, 'vision'), false);
  });
  it('a team the file lists: budgeted; one it does not list: the 1.0.0 path, no marker', () => {
    assert.equal(takesBudgetBranch(budgets, 'vision'), true);
    assert.equal(takesBudgetBranch(budgets, 'rl-agents'), false);
  });
  it('a team name that is an object key of JavaScript is not a listed team', () => {
    assert.equal(takesBudgetBranch(budgets, 'constructor'), false);
  });
  it('no team attribute, or a file that cannot be read: the branch, whose reserve decides or names the error', () => {
    assert.equal(takesBudgetBranch(budgets, undefined), true);
    assert.equal(takesBudgetBranch(new Error('budgets.yaml: teams.x.gpuHours: must be above 0'), 'x'), true);
  });
});

describe('budgetPatchActivation: the callback the worker installs', () => {
  const info = (team?: string) =>
    ({
      typedSearchAttributes: new TypedSearchAttributes(
        team ? [{ key: SearchAttributes.team, value: team }] : [],
      ),
    }) as unknown as PatchActivationInput['workflowInfo'];
  const ask = (read: (() => BudgetsFile) | undefined, patchId: string, team?: string) =>
    budgetPatchActivation(read)({ patchId, workflowInfo: info(team) });

  it('reads the team from the RagenTeam search attribute and the file on each call', () => {
    let reads = 0;
    const read = () => {
      reads++;
      return budgets;
    };
    assert.equal(ask(read, TEAM_BUDGET, 'vision'), true);
    assert.equal(ask(read, TEAM_BUDGET, 'rl-agents'), false);
    assert.equal(reads, 2);
  });
  it('a file that throws takes the branch; no file does not', () => {
    const broken = () => {
      throw new Error('ENOENT');
    };
    assert.equal(ask(broken, TEAM_BUDGET, 'vision'), true);
    assert.equal(ask(undefined, TEAM_BUDGET, 'vision'), false);
  });
  it('every other patch id: always its new branch, whatever the budgets', () => {
    assert.equal(ask(undefined, HASHING_DURING_TEARDOWN, 'rl-agents'), true);
  });
});
