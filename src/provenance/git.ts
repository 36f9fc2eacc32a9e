import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../config/config.js';
import type { ExperimentSpec } from '../domain/spec/experiment.js';
import type { ResolvedProvenance } from '../domain/run/provenance.js';
import { SpecError } from '../domain/spec/spec-error.js';
import { modelRevisionOf } from './model.js';

const run = promisify(execFile);

async function git(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    return (await run('git', args, { cwd })).stdout.trim();
  } catch {
    return undefined;
  }
}

/**
 * Detect the payload repository's commit, dirtiness and submodule commits from git; fall back to
 * the spec's provenance where git cannot tell. Missing both is bad input, refused before anything runs.
 */
export async function resolveProvenance(
  spec: ExperimentSpec,
  repoDir = REPO_ROOT,
): Promise<ResolvedProvenance> {
  const head = await git(repoDir, ['rev-parse', 'HEAD']);
  const submodules: Record<string, string> = { ...spec.provenance.submodules };
  const subStatus = await git(repoDir, ['submodule', 'status', '--recursive']);
  for (const line of (subStatus ?? '').split('\n')) {
    const m = /^[ +-U]?([0-9a-f]{40}) (\S+)/.exec(line);
    if (m?.[1] && m[2]) submodules[m[2]] = m[1];
  }
  const repoCommit = head ?? spec.provenance.repoCommit;
  const defaultModel =
    spec.backend === 'local' ? 'ragen_toy tabular policy (no pretrained model)' : undefined;
  const fromModel = spec.model
    ? ((await modelRevisionOf(spec.model)) ??
      `directory ${spec.model.path ?? ''} (fingerprinted on the nodes: manifest environment.probe.model.revision)`)
    : undefined;
  const modelRevision = spec.provenance.modelRevision ?? fromModel ?? defaultModel;
  const issues = [];
  if (!repoCommit)
    issues.push({
      field: 'provenance.repoCommit',
      message: `git cannot tell the commit of ${repoDir}; set provenance.repoCommit to the full commit`,
    });
  if (!modelRevision)
    issues.push({
      field: 'provenance.modelRevision',
      message:
        'required for the kuberay backend: the model repository revision (e.g. the Hugging Face commit)',
    });
  if (issues.length > 0 || !repoCommit || !modelRevision) throw new SpecError('provenance', issues);
  const version = (JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string })
    .version;
  return {
    repoCommit,
    repoDirty: head ? (await git(repoDir, ['status', '--porcelain', '--untracked-files=no'])) !== '' : false,
    repoSource: head ? 'git' : 'spec',
    submodules,
    modelRevision,
    orchestratorVersion: version,
  };
}
