import type { SearchAttributePair } from '@temporalio/common';
import type { ExperimentSpec } from '../domain/spec/experiment.js';
import { startSearchAttributes } from '../workflows/search-attributes.js';

/**
 * What a workflow's start options carry for visibility: the search attributes known at start and
 * the static summary the Temporal UI shows. Both are part of the start itself: no history event.
 */
export interface VisibleStart {
  typedSearchAttributes: SearchAttributePair[];
  staticSummary: string;
}

export function experimentStart(spec: ExperimentSpec): VisibleStart {
  return {
    typedSearchAttributes: startSearchAttributes({
      kind: 'experiment',
      name: spec.name,
      backend: spec.backend,
      stage: 'preflight',
      owner: spec.owner,
      team: spec.team,
    }),
    staticSummary: `${spec.name}: experiment on ${spec.backend}, ${spec.trainer.totalTrainingSteps} steps`,
  };
}

/** `workflowId` is undefined for a schedule's action: the server appends the fire time to the id. */
export function campaignStart(spec: ExperimentSpec, workflowId?: string): VisibleStart {
  return {
    typedSearchAttributes: startSearchAttributes({
      kind: 'campaign',
      name: spec.name,
      backend: spec.backend,
      stage: 'running',
      campaignId: workflowId,
      owner: spec.owner,
      team: spec.team,
    }),
    staticSummary: `${spec.name}: campaign on ${spec.backend}, ${spec.trainer.totalTrainingSteps} steps`,
  };
}

/** What a sweep's start needs of its spec (parsed or as carried in a workflow input). */
interface SweepNaming {
  name: string;
  base: { backend?: string; owner?: string; team?: string };
  parameters: { grid?: Record<string, unknown>; random?: { params?: Record<string, unknown> } };
}

export function sweepStart(sweep: SweepNaming, workflowId?: string): VisibleStart {
  const swept = [
    ...Object.keys(sweep.parameters.grid ?? {}),
    ...Object.keys(sweep.parameters.random?.params ?? {}),
  ];
  return {
    typedSearchAttributes: startSearchAttributes({
      kind: 'sweep',
      name: sweep.name,
      backend: sweep.base.backend ?? 'local',
      stage: 'running',
      sweepId: workflowId,
      owner: sweep.base.owner,
      team: sweep.base.team,
    }),
    staticSummary: `${sweep.name}: sweep over ${swept.join(', ')} on ${sweep.base.backend}`,
  };
}
