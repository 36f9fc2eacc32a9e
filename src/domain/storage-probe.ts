/**
 * The shared-storage proof after join (kuberay): the orchestrator's worker writes a nonce under the
 * storage mount, one Ray task per alive node (pinned with NodeAffinitySchedulingStrategy) reads it
 * and writes an acknowledgement, and the worker reads every acknowledgement back. Pure parts here:
 * the probe's argv and the verdict.
 */

/** Runs on the cluster as a Ray job: `python -c SCRIPT <dir> <nonce>`; needs only Ray in the image. */
const PROBE_SCRIPT = `
import json, os, sys
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

probe_dir, nonce = sys.argv[1], sys.argv[2]
ray.init(address="auto")

@ray.remote(num_cpus=0)
def probe(node_id, ip):
    seen = None
    try:
        with open(os.path.join(probe_dir, "nonce")) as f:
            seen = f.read().strip()
    except OSError as e:
        return {"node": node_id, "ip": ip, "ok": False, "error": "cannot read the nonce: %s" % e}
    if seen != nonce:
        return {"node": node_id, "ip": ip, "ok": False, "error": "the nonce file holds %r, not this run's nonce" % seen[:80]}
    try:
        with open(os.path.join(probe_dir, "ack-" + node_id), "w") as f:
            f.write(nonce + " " + node_id)
    except OSError as e:
        return {"node": node_id, "ip": ip, "ok": False, "error": "cannot write the acknowledgement: %s" % e}
    return {"node": node_id, "ip": ip, "ok": True}

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
}): { ok: true; nodes: number } | { ok: false; problems: string[] } {
  const problems: string[] = [];
  if (input.reports.length < input.expectedNodes) {
    problems.push(`only ${input.reports.length} of ${input.expectedNodes} Ray nodes ran the probe`);
  }
  for (const r of input.reports) {
    if (!r.ok) {
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
  return problems.length ? { ok: false, problems } : { ok: true, nodes: input.reports.length };
}
