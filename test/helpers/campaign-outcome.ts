import { readFile } from 'node:fs/promises';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { CampaignResult } from '../../src/domain/campaign/campaign.js';
import { metricsPath } from '../../src/domain/spec/paths.js';

/** A campaign's result, also when it failed (the failure details carry it, if it got that far). */
export async function outcomeOf(
  handle: WorkflowHandle,
): Promise<{ result?: CampaignResult; error?: unknown }> {
  try {
    return { result: (await handle.result()) as CampaignResult };
  } catch (error) {
    const details =
      error instanceof WorkflowFailedError
        ? (error.cause as { details?: unknown[] } | undefined)?.details?.[0]
        : undefined;
    return { result: details as CampaignResult | undefined, error };
  }
}

/**
 * Every restart the trainer's metrics.jsonl shows (the file logger appends each step of every
 * attempt in the shared checkpoint dir): the last step logged before it and the step it resumed
 * from (the first step logged after it, minus one). Steps lost = lastStep - resumedFrom.
 */
export async function restartsInMetrics(
  checkpointDir: string,
): Promise<{ lastStep: number; resumedFrom: number; lost: number }[]> {
  const steps = await metricsSteps(checkpointDir);
  const out = [];
  for (let i = 1; i < steps.length; i++) {
    const prev = steps[i - 1] ?? 0;
    const now = steps[i] ?? 0;
    if (now <= prev) out.push({ lastStep: prev, resumedFrom: now - 1, lost: prev - (now - 1) });
  }
  return out;
}

/** The step of every line of the trainer's metrics.jsonl in `checkpointDir`, in order (none: []). */
export async function metricsSteps(checkpointDir: string): Promise<number[]> {
  const text = await readFile(metricsPath(checkpointDir), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [(JSON.parse(l) as { step: number }).step];
      } catch {
        return []; // a line cut short by a kill or a full disk
      }
    });
}
