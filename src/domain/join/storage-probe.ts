/**
 * The shared-storage proof after join (kuberay): the orchestrator's worker writes a nonce under the
 * storage mount, one Ray task per alive node (pinned with NodeAffinitySchedulingStrategy) reads it
 * and writes an acknowledgement, and the worker reads every acknowledgement back. Pure parts here:
 * the probe's argv and the verdict.
 */

/** Runs on the cluster as a Ray job: `python -c SCRIPT <dir> <nonce>`; needs only Ray in the image. */
const PROBE_SCRIPT = `
import errno, json, os, sys
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

probe_dir, nonce = sys.argv[1], sys.argv[2]
ray.init(address="auto")

@ray.remote(num_cpus=0)
def probe(node_id, ip):
    me = {"node": node_id, "ip": ip, "uid": os.getuid(), "gid": os.getgid(), "groups": sorted(set(os.getgroups()))}
    def failed(what, e):
        denied = isinstance(e, OSError) and e.errno in (errno.EACCES, errno.EPERM)
        return dict(me, ok=False, error="%s: %s" % (what, e), denied=denied)
    seen = None
    try:
        with open(os.path.join(probe_dir, "nonce")) as f:
            seen = f.read().strip()
    except OSError as e:
        return failed("cannot read the nonce", e)
    if seen != nonce:
        return dict(me, ok=False, error="the nonce file holds %r, not this run's nonce" % seen[:80])
    try:
        with open(os.path.join(probe_dir, "ack-" + node_id), "w") as f:
            f.write(nonce + " " + node_id)
    except OSError as e:
        return failed("cannot write the acknowledgement", e)
    return dict(me, ok=True)

nodes = [n for n in ray.nodes() if n["Alive"]]
refs = [probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(n["NodeID"], n["NodeManagerAddress"]) for n in nodes]
print("STORAGE_PROBE " + json.dumps(ray.get(refs, timeout=120)), flush=True)
`;

export function storageProbeArgv(probeDir: string, nonce: string): string[] {
  return ['python', '-c', PROBE_SCRIPT, probeDir, nonce];
}

export interface ProbeReport {
  node: string;
  ip: string;
  ok: boolean;
  error?: string;
  /** The error was EACCES or EPERM: the Pod's user may not read or write there. */
  denied?: boolean;
  /** Who the probe ran as on that node (the Ray container's user). */
  uid?: number;
  gid?: number;
  groups?: number[];
}

/** Who the Pods run as, where a node was refused access (EACCES/EPERM). */
export interface DeniedAccess {
  uid: number;
  gid: number;
  groups: number[];
  nodes: string[];
}

/**
 * Pure: every Ray node read this run's nonce, and the worker sees each node's acknowledgement
 * (`acks`: node id to file content, as the worker read them). Problems name the node and the side
 * that cannot see the other's file.
 */
export function judgeStorageProbe(input: {
  nonce: string;
  probeDir: string;
  reports: ProbeReport[];
  acks: Map<string, string>;
  expectedNodes: number;
}): { ok: true; nodes: number } | { ok: false; problems: string[]; denied?: DeniedAccess } {
  const problems: string[] = [];
  let denied: DeniedAccess | undefined;
  if (input.reports.length < input.expectedNodes) {
    problems.push(`only ${input.reports.length} of ${input.expectedNodes} Ray nodes ran the probe`);
  }
  for (const r of input.reports) {
    if (!r.ok) {
      if (r.denied) {
        denied ??= { uid: r.uid ?? -1, gid: r.gid ?? -1, groups: r.groups ?? [], nodes: [] };
        denied.nodes.push(r.ip);
        problems.push(
          `Ray node ${r.ip} (${r.node.slice(0, 12)}), running as uid ${r.uid ?? '?'} gid ${r.gid ?? '?'}, is denied access in ${input.probeDir}: ${r.error ?? 'permission denied'}`,
        );
        continue;
      }
      problems.push(
        `Ray node ${r.ip} (${r.node.slice(0, 12)}) does not see the worker's file ${input.probeDir}/nonce: ${r.error ?? 'unknown error'}`,
      );
      continue;
    }
    const ack = input.acks.get(r.node);
    if (ack === undefined) {
      problems.push(
        `the orchestrator's worker does not see ${input.probeDir}/ack-${r.node}, written by Ray node ${r.ip}`,
      );
    } else if (ack.trim() !== `${input.nonce} ${r.node}`) {
      problems.push(`${input.probeDir}/ack-${r.node} holds another run's content on the worker's side`);
    }
  }
  if (!problems.length) return { ok: true, nodes: input.reports.length };
  return denied ? { ok: false, problems, denied } : { ok: false, problems };
}

/**
 * The fix for Pods denied access to the run's folder: which user and groups they run as, who owns
 * the folder (as the worker sees it), and the spec fields or the chgrp/chmod that make it shared.
 */
export function deniedAccessFix(
  denied: DeniedAccess,
  dir: { path: string; uid: number; gid: number; mode: number },
  mountPath: string,
): string {
  const groups = denied.groups.length ? denied.groups.join(',') : 'none';
  const mode = (dir.mode & 0o7777).toString(8).padStart(4, '0');
  return (
    `the Ray Pods run as uid ${denied.uid} gid ${denied.gid} (supplementary groups ${groups}) and may not write ${dir.path} ` +
    `(owner uid ${dir.uid} gid ${dir.gid}, mode ${mode}). Fix: set kuberay.securityContext.fsGroup (or runAsGroup) to a ` +
    `group the Pods' user may write the volume with: the worker then gives the run's folders that group, mode 2775; ` +
    `and make ${mountPath} writable to that group once (chgrp <gid> ${mountPath} && chmod 2775 ${mountPath}), ` +
    `or set kuberay.securityContext.runAsUser to the volume's owner (uid ${dir.uid})`
  );
}
