/** The workflow bundle's entry: every workflow the worker registers. */
export { experiment } from './experiment.js';
export { reaper } from './reaper.js';
export { sweep } from './sweep.js';
export { campaign } from './campaign.js';
export { teamBudget } from './team-budget.js';
