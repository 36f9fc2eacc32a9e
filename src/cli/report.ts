import { randomBytes } from 'node:crypto';
import { link, mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { OrchestratorConfig } from '../config/config.js';
import type { ReportOptions } from '../report/inputs.js';
import { ReportInputError } from '../report/load-run.js';
import { type ReportSource, reportHtml } from '../report/write-report.js';
import { withClient } from './client.js';
import { UserError } from '../config/user-errors.js';

export interface ReportCommandInput extends ReportOptions {
  workflowId?: string;
  from?: string;
  out?: string;
  force: boolean;
}

/** `report-<id>.html` in the working directory, with the id made safe for a file name. */
export function defaultReportPath(name: string): string {
  return resolve(`report-${name.replace(/[^A-Za-z0-9._-]+/g, '_')}.html`);
}

/** Write the page whole (temp file, then link or rename): an existing file is kept unless --force. */
async function writeReport(path: string, html: string, force: boolean): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, html);
  try {
    if (force) await rename(tmp, path);
    else await link(tmp, path); // fails with EEXIST instead of replacing a file
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      throw new UserError(`${path} exists: choose another --out, or add --force to replace it`, 2);
    throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function makeReport(
  source: ReportSource,
  input: ReportCommandInput,
  name: string,
  hint = '',
): Promise<number> {
  const started = performance.now();
  let html: string;
  try {
    html = await reportHtml(source, { keys: input.keys, top: input.top });
  } catch (err) {
    if (err instanceof ReportInputError) throw new UserError(`${err.message}${hint}`);
    throw err;
  }
  const path = input.out ? resolve(input.out) : defaultReportPath(name);
  await writeReport(path, html, input.force);
  const bytes = (await stat(path)).size;
  console.log(
    `report: ${path} (${(bytes / 1024).toFixed(0)} KiB, written in ${((performance.now() - started) / 1000).toFixed(2)} s; opens offline)`,
  );
  return 0;
}

/** `report <workflow id>` (folders from the workflow's input) or `report --from <archive folder>` (no server). */
export async function reportCommand(
  config: OrchestratorConfig | undefined,
  input: ReportCommandInput,
): Promise<number> {
  if (input.from !== undefined) {
    const dir = resolve(input.from);
    return makeReport({ dir }, input, input.workflowId ?? basename(dir));
  }
  const workflowId = input.workflowId!;
  if (!config) throw new Error('a workflow id needs the Temporal settings');
  const located = await withClient(config, async (client) => {
    const { locateRun } = await import('./report-locate.js');
    return locateRun(client, workflowId);
  });
  const hint =
    located.status === 'RUNNING'
      ? ` (the ${located.kind} is still running: its manifest is written when it ends)`
      : '';
  return makeReport(located, input, workflowId, hint);
}
