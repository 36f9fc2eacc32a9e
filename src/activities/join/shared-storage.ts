import { createHash } from 'node:crypto';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClusterHandle } from '../../domain/cluster/cluster.js';
import { shellQuote } from '../../domain/ragen/entrypoint.js';
import { ErrorTypes } from '../../domain/failures/error-types.js';
import { type ExperimentSpec, workerNodes } from '../../domain/spec/experiment.js';
import { submissionId } from '../../domain/spec/naming.js';
import {
  deniedAccessFix,
  judgeStorageProbe,
  type ProbeReport,
  storageProbeArgv,
} from '../../domain/join/storage-probe.js';
import { backendOf } from '../common/backend-of.js';
import { rayHeadOf } from '../common/ray-head-of.js';
import type { ActivityDeps } from '../common/deps.js';
import { permanent } from '../common/failures.js';
import { logTail } from '../../domain/train/log-tail.js';
import { runRayJob } from '../common/ray-job.js';
import { makeSharedDir, sharedGroup, writeSharedFile } from '../common/shared-dirs.js';

const RESULT_LINE = /STORAGE_PROBE (\[.*\])/;

/**
 * Stage 4a' (kuberay). Prove that this worker and every Ray pod see the same volume before any
 * training step: the worker writes a nonce under the run directory (on the storage mount), a Ray
 * job reads it on every alive node and writes one acknowledgement per node, the worker reads them
 * all back. A missing or foreign file on either side fails permanently (StorageNotShared), naming
 * the node; a Pod denied access (EACCES/EPERM) fails as StorageNotWritable, naming the Pods' uid
 * and gid, the folder's owner and mode, and the securityContext or chgrp that fixes it. The
 * run's folder is created 2775 with the Pods' group (shared-dirs.ts). Idempotent: the nonce derives from the cluster and its owner, the job's submission id
 * from the cluster, so a retry finds the same job and the same files.
 */
export function createProveSharedStorage(deps: ActivityDeps) {
  return async function proveSharedStorage(input: {
    spec: ExperimentSpec;
    handle: ClusterHandle;
    runDir: string;
  }): Promise<{ nodes: number }> {
    const { spec, handle } = input;
    const backend = backendOf(deps, spec.backend);
    const probeDir = join(input.runDir, `storage-probe-${handle.name}`);
    const nonce = createHash('sha256')
      .update(JSON.stringify([handle.name, handle.owner]))
      .digest('hex')
      .slice(0, 32);
    // Shared (2775, the Pods' group): the run's folder is where the Pods write next.
    await makeSharedDir(probeDir, sharedGroup(spec));
    await writeSharedFile(join(probeDir, 'nonce'), nonce);
    const dashboard = await rayHeadOf(deps, handle);
    const argv = backend.resolveArgv(storageProbeArgv(probeDir, nonce));
    const { job, logs } = await runRayJob(dashboard, submissionId(handle.name, 'storage'), shellQuote(argv), {
      pollIntervalMs: deps.pollIntervalMs,
    });
    const line = RESULT_LINE.exec(logs)?.[1];
    if (!line) {
      throw permanent(
        ErrorTypes.StorageNotShared,
        `the shared-storage probe printed no result (job ${job.status}: ${job.message}); log tail:\n${logTail(logs)}`,
      );
    }
    const reports = JSON.parse(line) as ProbeReport[];
    const acks = new Map<string, string>();
    for (const file of await readdir(probeDir)) {
      if (file.startsWith('ack-')) acks.set(file.slice(4), await readFile(join(probeDir, file), 'utf8'));
    }
    const verdict = judgeStorageProbe({
      nonce,
      probeDir,
      reports,
      acks,
      expectedNodes: 1 + workerNodes(spec),
    });
    if (!verdict.ok && verdict.denied) {
      const s = await stat(probeDir);
      throw permanent(
        ErrorTypes.StorageNotWritable,
        `the Ray pods cannot use the run's folder on the shared volume: ${verdict.problems.join('; ')}. ${deniedAccessFix(
          verdict.denied,
          { path: probeDir, uid: s.uid, gid: s.gid, mode: s.mode },
          spec.kuberay?.storage.mountPath ?? input.runDir,
        )}`,
        { problems: verdict.problems, denied: verdict.denied },
      );
    }
    if (!verdict.ok) {
      const where = spec.kuberay
        ? `PVC ${spec.kuberay.storage.pvc} at ${spec.kuberay.storage.mountPath}`
        : 'the storage mount';
      throw permanent(
        ErrorTypes.StorageNotShared,
        `the orchestrator's worker and the Ray pods do not share ${where}: ${verdict.problems.join('; ')}. Mount the same ReadWriteMany volume at the same path on the worker and on every Ray pod`,
        { problems: verdict.problems },
      );
    }
    await rm(probeDir, { recursive: true, force: true });
    return { nodes: verdict.nodes };
  };
}
