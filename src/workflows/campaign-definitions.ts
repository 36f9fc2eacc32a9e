import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { CampaignProgress } from '../domain/campaign/campaign.js';

/**
 * Commands of the campaign workflow, shared with the client. Cancel = workflow cancellation.
 * pause, resume and extend are Updates: a validator refuses what cannot apply (before anything is
 * recorded) and the answer is the campaign's new progress.
 */
export const pauseUpdate = defineUpdate<CampaignProgress>('pause');
export const resumeUpdate = defineUpdate<CampaignProgress>('resume');
/** More total training steps (added to the current total). */
export const extendUpdate = defineUpdate<CampaignProgress, [number]>('extend');

/** The campaign's progress; the same fields as its answer to the `status` query (kind 'campaign'). */
export const progressQuery = defineQuery<CampaignProgress>('progress');
