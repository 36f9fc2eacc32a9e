import type { ExperimentSpec } from './experiment.js';
import { rayAuthIssues } from '../cluster/ray-auth.js';
import { ragenPreflightIssues } from '../ragen/ragen-preflight.js';
import { seedRangeIssues } from '../validate/seed-ranges.js';
import { validationRunnerIssues } from '../validate/validation-runner.js';
import { type SpecIssue, fieldPath } from './spec-error.js';

/**
 * How a run is set up, checked where a spec enters (the CLI's loaders and the preflight activity)
 * rather than in the schema: workflows parse specs with the schema, and a rule added later must not
 * change how a recorded workflow replays (a sweep's children are validated in the workflow).
 */
export function runSetupIssues(spec: ExperimentSpec): SpecIssue[] {
  const issues = [
    ...seedRangeIssues(spec),
    ...validationRunnerIssues(spec),
    ...ragenPreflightIssues(spec),
    ...rayAuthIssues(spec),
  ];
  return issues.map((i) => ({ field: fieldPath(i.path), message: i.message }));
}
