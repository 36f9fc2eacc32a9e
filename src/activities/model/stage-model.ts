import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { PreflightCheck } from '../../backends/backend.js';
import { TransientErrorTypes } from '../../domain/failures/error-types.js';
import type { ExperimentSpec } from '../../domain/spec/experiment.js';
import { modelDirectory } from '../../domain/model/model.js';
import { transient } from '../../errors/domain-error.js';

const run = promisify(execFile);

/** Under the preflight profile's 5 minutes; a partial download resumes on the retry. */
const STAGE_TIMEOUT_MS = 4 * 60_000;

/**
 * A `model: {hub, revision, hfHome}` is staged once, by the worker (which mounts the shared
 * storage), with huggingface_hub's snapshot_download into `hfHome` (probes/ragen_probes/stage_model.py);
 * training then runs offline from there. A snapshot already there is not downloaded again.
 * Returns the preflight check; throws a transient error when the hub cannot be reached (retried).
 */
export async function stageHubModel(
  spec: ExperimentSpec,
  python: string,
  probesDir: string,
): Promise<PreflightCheck | undefined> {
  const model = spec.model;
  if (model?.hub === undefined || model.revision === undefined || model.hfHome === undefined)
    return undefined;
  const name = `model-staged:${model.hub}@${model.revision}`;
  const dir = modelDirectory(model);
  if (
    await stat(join(dir, 'config.json')).then(
      () => true,
      () => false,
    )
  )
    return { name, ok: true, detail: `already staged at ${dir}` };
  const argv = [
    '-m',
    'ragen_probes.stage_model',
    '--hub',
    model.hub,
    '--revision',
    model.revision,
    '--hf-home',
    model.hfHome,
  ];
  const outcome = await run(python, argv, {
    cwd: probesDir,
    timeout: STAGE_TIMEOUT_MS,
    maxBuffer: 16 << 20,
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code?: number | string; stdout?: string; stderr?: string }) => ({
      code: typeof e.code === 'number' ? e.code : -1,
      stdout: e.stdout ?? '',
      stderr: e.stderr ?? String(e),
    }),
  );
  const said = outcome.stderr.trim().split('\n').at(-1) ?? '';
  if (outcome.code === 3 || outcome.code === -1)
    throw transient(
      TransientErrorTypes.ModelHubUnavailable,
      `staging ${model.hub}@${model.revision}: ${said}`,
    );
  if (outcome.code !== 0)
    return {
      name,
      ok: false,
      detail:
        `${said}; ` +
        (outcome.code === 4
          ? `check model.hub and model.revision (a commit of that repository), and HF_TOKEN in the worker's environment for a gated model`
          : `install huggingface_hub in the worker's Python (${python}), or stage the model yourself and set model.path`),
    };
  const line = /^STAGED (\{.*\})$/m.exec(outcome.stdout)?.[1];
  const staged = line ? (JSON.parse(line) as { path: string; files: string[] }) : undefined;
  if (staged?.path !== dir)
    return {
      name,
      ok: false,
      detail: `snapshot_download put the model at ${staged?.path ?? '(nothing printed)'}, not ${dir}`,
    };
  return { name, ok: true, detail: `staged ${staged.files.length} files at ${dir}` };
}
