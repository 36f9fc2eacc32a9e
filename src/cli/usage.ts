import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { OrchestratorConfig } from '../config/config.js';
import { type RunUsage, type UsageBucket, type UsageReport, aggregateUsage } from '../domain/usage/usage.js';
import { UsageError } from '../config/user-errors.js';
import { withClient } from './client.js';
import { type UsageFormat, usageCsv, usageJson, usageTable } from './usage-format.js';
import { type LeftOut, collectUsage, usageQuery } from './usage-sources.js';

export interface UsageCommandInput {
  since: string;
  until?: string;
  by: UsageBucket;
  format: UsageFormat;
  owner?: string;
  team?: string;
  pricePerGpuHour?: number;
  currency: string;
  out?: string;
}

/** The report from runs already read (no server): what `usage` prints, also for tests and the bench. */
export async function renderUsage(
  runs: readonly RunUsage[],
  leftOut: readonly LeftOut[],
  input: UsageCommandInput,
  now: Date,
): Promise<{ report: UsageReport; text: string }> {
  let report: UsageReport;
  try {
    report = aggregateUsage(runs, {
      since: input.since,
      until: input.until ?? now.toISOString(),
      by: input.by,
      ...(input.pricePerGpuHour === undefined
        ? {}
        : { price: { pricePerGpuHour: input.pricePerGpuHour, currency: input.currency } }),
    });
  } catch (err) {
    throw new UsageError(`usage: ${(err as Error).message}`); // mixed currencies: the fix is a flag
  }
  switch (input.format) {
    case 'table':
      return { report, text: `${usageTable(report)}\n` };
    case 'csv':
      return { report, text: usageCsv(report) };
    case 'json':
      return { report, text: usageJson(report, [...leftOut]) };
    case 'html': {
      const { usageHtml } = await import('../report/usage-view.js');
      return { report, text: await usageHtml(report, input, now) };
    }
  }
}

/**
 * `usage`: allocated and busy GPU-hours of the experiments that match, by bucket, team and owner,
 * from visibility and the manifests; running experiments count up to now.
 */
export async function usageCommand(config: OrchestratorConfig, input: UsageCommandInput): Promise<number> {
  const now = new Date();
  const until = input.until ?? now.toISOString();
  const { runs, leftOut } = await withClient(config, (client) =>
    collectUsage(client, usageQuery(input, input.since, until), now.toISOString()),
  );
  const { text } = await renderUsage(runs, leftOut, input, now);
  if (input.out) {
    await writeFile(resolve(input.out), text);
    console.log(`usage: ${resolve(input.out)} (${runs.length} experiments)`);
  } else process.stdout.write(text);
  // Totals are never short without a word: each run left out is named on stderr (json carries them too).
  for (const l of leftOut) console.error(`left out ${l.workflowId}: ${l.reason}`);
  return 0;
}
