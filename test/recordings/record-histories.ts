/**
 * `npm run record-histories`: runs every scenario on the time-skipping server with stand-in
 * activities and writes each history into test/workflows/histories/<release>/ (package.json's
 * version), which the replay test replays in full with every other release's. Record on purpose
 * only: the history from before a new `patched()` id, one that takes its new branch, or every
 * scenario once for a release (see CONTRIBUTING.md). A file already there is never written over.
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
