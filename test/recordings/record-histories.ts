/**
 * `npm run record-histories`: runs every scenario on the time-skipping server with stand-in
 * activities and writes each history into test/workflows/histories/, which the replay test replays
 * in full. Record on purpose only: a new file when a `patched()` id is added (the history from
 * before it), or every file again when a release may break running workflows (see CONTRIBUTING.md).
 * One scenario by name: npm run record-histories -- sweep-limits-set
 */
import type { Scenario } from '../helpers/history-recorder.js';
import { recordHistories } from '../helpers/history-recorder.js';
import { budgetScenarios } from './budget-scenarios.js';
import { campaignScenarios } from './campaign-scenarios.js';
import { experimentScenarios } from './experiment-scenarios.js';
import { reaperScenarios } from './reaper-scenario.js';
import { sweepScenarios } from './sweep-scenarios.js';

const all: Record<string, Scenario> = {
  ...experimentScenarios,
  ...campaignScenarios,
  ...sweepScenarios,
  ...reaperScenarios,
  ...budgetScenarios,
};
const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !(n in all));
if (unknown.length > 0)
  throw new Error(`no scenario ${unknown.join(', ')}; known: ${Object.keys(all).join(', ')}`);
await recordHistories(wanted.length === 0 ? all : Object.fromEntries(wanted.map((n) => [n, all[n]!])));
