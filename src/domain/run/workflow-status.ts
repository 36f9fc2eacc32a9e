import { z } from 'zod';
import { CampaignProgressSchema } from '../campaign/campaign.js';
import { ExperimentStatusSchema } from './experiment-input.js';
import { SweepStatusSchema } from '../sweep/sweep.js';

/**
 * What the `status` query answers, for every workflow kind: `status <workflow id>` asks one query
 * and reads `kind` to know which fields follow.
 */
export const WorkflowStatusSchema = z.discriminatedUnion('kind', [
  ExperimentStatusSchema.extend({ kind: z.literal('experiment') }),
  CampaignProgressSchema.extend({ kind: z.literal('campaign') }),
  SweepStatusSchema.extend({ kind: z.literal('sweep') }),
]);
export type WorkflowStatus = z.infer<typeof WorkflowStatusSchema>;
