import { type SearchAttributePair, SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';

/**
 * The project's custom search attributes: the one list that the dev server we start, the test
 * servers, docs/operations.md's `temporal operator search-attribute create` lines and the workflows use.
 * A server fails the workflow task that upserts an unregistered attribute (and refuses a start that
 * sets one), so every namespace the workflows run in must register all of them.
 */
export const SearchAttributes = {
  /** spec.name (experiments and campaigns), the sweep's name (sweeps and their children). */
  name: defineSearchAttributeKey('RagenName', SearchAttributeType.KEYWORD),
  kind: defineSearchAttributeKey('RagenKind', SearchAttributeType.KEYWORD),
  /** The sweep's workflow id, on the sweep and on each of its children. */
  sweepId: defineSearchAttributeKey('RagenSweepId', SearchAttributeType.KEYWORD),
  /** The campaign's workflow id, on the campaign and on each of its attempts. */
  campaignId: defineSearchAttributeKey('RagenCampaignId', SearchAttributeType.KEYWORD),
  backend: defineSearchAttributeKey('RagenBackend', SearchAttributeType.KEYWORD),
  /** spec.owner and spec.team (the CLI fills them), on every run and on a sweep's or campaign's children. */
  owner: defineSearchAttributeKey('RagenOwner', SearchAttributeType.KEYWORD),
  team: defineSearchAttributeKey('RagenTeam', SearchAttributeType.KEYWORD),
  /** The phase (see VisibleStage), not every stage: each upsert is one history event. */
  stage: defineSearchAttributeKey('RagenStage', SearchAttributeType.KEYWORD),
  outcome: defineSearchAttributeKey('RagenOutcome', SearchAttributeType.KEYWORD),
  validationSuccess: defineSearchAttributeKey('RagenValidationSuccess', SearchAttributeType.DOUBLE),
  /** Upserted at checkpoints only. */
  checkpointStep: defineSearchAttributeKey('RagenCheckpointStep', SearchAttributeType.INT),
  /** Allocated GPU-seconds (GPUs x cluster time), upserted once when the run ends, so `list` reads it free. */
  gpuSeconds: defineSearchAttributeKey('RagenGpuSeconds', SearchAttributeType.DOUBLE),
} as const;

export type WorkflowKind = 'experiment' | 'campaign' | 'sweep';

/**
 * What the search attribute `RagenStage` says: experiments by phase (preflight = preflight and
 * verify; cluster = submit, join and resubmits; finish = archive and teardown), campaigns and sweeps
 * by their own phase. The status query and the current details name the exact stage.
 */
export type VisibleStage =
  'preflight' | 'cluster' | 'train' | 'validate' | 'finish' | 'running' | 'paused' | 'done';

/** Name and type as the `temporal` CLI spells them (`--search-attribute RagenName=Keyword`). */
const CLI_TYPE: Record<SearchAttributeType, string> = {
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

export const SEARCH_ATTRIBUTE_KEYS: { name: string; type: SearchAttributeType }[] =
  Object.values(SearchAttributes);

export const searchAttributeDefinitions = (): { name: string; type: string }[] =>
  SEARCH_ATTRIBUTE_KEYS.map((k) => ({ name: k.name, type: CLI_TYPE[k.type] }));

/** `--search-attribute Name=Type` for each, for `temporal server start-dev`. */
export const devServerSearchAttributeArgs = (): string[] =>
  searchAttributeDefinitions().flatMap(({ name, type }) => ['--search-attribute', `${name}=${type}`]);

/** What is known when a workflow starts: set through its start options, so it costs no history event. */
export interface StartAttributes {
  kind: WorkflowKind;
  name: string;
  backend: string;
  stage: VisibleStage;
  sweepId?: string;
  campaignId?: string;
  /** Absent in the inputs of runs started before owners existed: then not set. */
  owner?: string;
  team?: string;
}

export function startSearchAttributes(a: StartAttributes): SearchAttributePair[] {
  const K = SearchAttributes;
  const pairs: SearchAttributePair[] = [
    { key: K.kind, value: a.kind },
    { key: K.name, value: a.name },
    { key: K.backend, value: a.backend },
    { key: K.stage, value: a.stage },
  ];
  if (a.sweepId) pairs.push({ key: K.sweepId, value: a.sweepId });
  if (a.campaignId) pairs.push({ key: K.campaignId, value: a.campaignId });
  if (a.owner) pairs.push({ key: K.owner, value: a.owner });
  if (a.team) pairs.push({ key: K.team, value: a.team });
  return pairs;
}
