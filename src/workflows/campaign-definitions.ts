import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { CampaignProgress } from '../spec/campaign.js';

/** Signals and the query of the campaign workflow, shared with the client. Cancel = workflow cancellation. */
export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
/** More total training steps (added to the current total). */
export const extendSignal = defineSignal<[number]>('extend');
export const progressQuery = defineQuery<CampaignProgress>('progress');
