import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PreflightCheck } from '../../backends/backend.js';
import { checkpointSpaceWarning, expectedSaves } from '../../domain/checkpoints/checkpoint-space.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { ExperimentSpecSchema, type ExperimentSpec } from '../../domain/spec/experiment.js';
import { runSetupIssues } from '../../domain/spec/run-setup.js';
import { backendOf } from '../common/backend-of.js';
import { makeSharedDir, sharedGroup } from '../common/shared-dirs.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { freeBytes } from '../checkpoints/checkpoint-space-check.js';
import { objectStoreWritable } from '../object-store/object-store-preflight.js';
import { stageHubModel } from '../model/stage-model.js';
import { REPO_ROOT } from '../../config/config.js';
import { runArchiveDir } from '../../domain/spec/paths.js';
import { snapshotCode } from '../code/code-shipping.js';
import { workflowIdOfActivity } from '../common/heartbeat-loop.js';

/** `code`: the tree packed once for the whole run (code-shipping.ts); bad input fails here for good. */
async function shippedCode(spec: ExperimentSpec): Promise<PreflightCheck[]> {
  if (!spec.code) return [];
  const shipped = await snapshotCode(spec, runArchiveDir(spec.storage, spec.name, workflowIdOfActivity()));
  if (!shipped) return [];
  const git = shipped.git
    ? `git ${shipped.git.commit.slice(0, 12)}${shipped.git.dirty ? ' with local changes' : ''}`
    : 'not in git';
  return [
    {
      name: `code:${shipped.path}`,
      ok: true,
      detail: `${shipped.files} files, ${(shipped.treeBytes / 1e6).toFixed(1)} MB packed to ${(shipped.archiveBytes / 1e6).toFixed(1)} MB as ${shipped.uri} (${git})`,
    },
  ];
}

/** A warning, not a refusal: preflight passes; the check's detail says what to expect. */
async function checkpointSpace(spec: ExperimentSpec): Promise<PreflightCheck[]> {
  const size = spec.storage.checkpointSizeGb;
  const free = await freeBytes(spec.storage.checkpointDir);
  if (size === undefined || free === undefined) return [];
  const warning = checkpointSpaceWarning(
    expectedSaves(spec.trainer),
    size * 1e9,
    free,
    spec.storage.checkpointDir,
  );
  return [
    {
      name: `checkpoint-space:${spec.storage.checkpointDir}`,
      ok: true,
      detail: warning
        ? `warning: ${warning}`
        : `${(free / 1e9).toFixed(2)} GB free for ${expectedSaves(spec.trainer)} checkpoints of ${size} GB`,
    },
  ];
}

async function writable(dir: string, group: number | undefined): Promise<PreflightCheck> {
  const probe = join(dir, `.preflight-${randomUUID()}`);
  try {
    // A missing storage root is made as the run's folders are: shared with the Pods' group.
    await makeSharedDir(dir, group);
    await writeFile(probe, 'ok');
    await rm(probe);
    return { name: `writable:${dir}`, ok: true, detail: 'created and removed a probe file' };
  } catch (err) {
    return {
      name: `writable:${dir}`,
      ok: false,
      detail: `${(err as Error).message}; make the directory writable by the worker or point storage elsewhere`,
    };
  }
}

/**
 * Stage 1. Spec consistency, backend reachability, permissions and capacity, storage writable (and
 * storage.objectStore: a probe object written and deleted); a `model.hub` revision is staged into
 * model.hfHome (stage-model.ts); `code` is packed once for the run (code-shipping.ts: the archive,
 * and its record next to the manifest, both write-once).
 * Creates no cluster (the probe file is removed). Idempotent; retried only for transient errors.
 */
export function createPreflight(deps: ActivityDeps) {
  return async function preflight(input: { spec: ExperimentSpec }): Promise<{ checks: PreflightCheck[] }> {
    const parsed = ExperimentSpecSchema.safeParse(input.spec);
    if (!parsed.success)
      throw permanent(
        ErrorTypes.InvalidSpec,
        parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
      );
    const spec = parsed.data;
    const setup = runSetupIssues(spec);
    if (setup.length > 0)
      throw permanent(ErrorTypes.InvalidSpec, setup.map((i) => `${i.field}: ${i.message}`).join('; '));
    const backend = backendOf(deps, spec.backend);
    const group = sharedGroup(spec);
    const storage = [
      await writable(spec.storage.checkpointDir, group),
      await writable(spec.storage.archiveDir, group),
    ];
    const failedStorage = storage.filter((c) => !c.ok);
    if (failedStorage.length > 0) {
      throw permanent(
        ErrorTypes.StorageNotWritable,
        `storage not writable: ${failedStorage.map((c) => `${c.name} (${c.detail})`).join('; ')}`,
        { checks: storage },
      );
    }
    // Before the backend's checks: a tree that cannot travel is refused before anything else is asked.
    const code = await shippedCode(spec);
    // Before the backend's checks: nothing (no cluster, no staged model) exists when it refuses.
    const objectStore = spec.storage.objectStore ? [await objectStoreWritable(spec.storage.objectStore)] : [];
    const backendChecks = await backend.preflight(spec);
    // After the backend's checks: a model is downloaded only for a cluster that can be had.
    const model = backendChecks.every((c) => c.ok)
      ? await stageHubModel(
          spec,
          deps.python ?? join(REPO_ROOT, '.venv', 'bin', 'python'),
          deps.probesDir ?? join(REPO_ROOT, 'probes'),
        )
      : undefined;
    const checks = [
      ...storage,
      ...objectStore,
      ...(await checkpointSpace(spec)),
      ...code,
      ...backendChecks,
      ...(model ? [model] : []),
    ];
    const failed = checks.filter((c) => !c.ok);
    if (failed.length > 0)
      throw permanent(
        ErrorTypes.PreflightFailed,
        `preflight failed: ${failed.map((c) => `${c.name}: ${c.detail}`).join('; ')}`,
        { checks },
      );
    return { checks };
  };
}
