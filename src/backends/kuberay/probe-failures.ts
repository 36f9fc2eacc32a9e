import { ErrorTypes } from '../../domain/failures/error-types.js';
import type { PodFailure } from './pod-failures.js';

/** The parts of a core/v1 Event the kubelet records when a probe fails (reason Unhealthy). */
export interface EventLike {
  reason?: string;
  type?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string; uid?: string; fieldPath?: string };
}

/** The executables KubeRay's own probes and commands run: a probe output naming one as missing is final. */
const PROBE_EXECUTABLES = ['wget', 'bash', 'ray'] as const;

/**
 * The kubelet's probe event message: `<Readiness|Liveness|Startup> probe failed: <output>` for a
 * probe that ran and failed, `... probe errored: <error>` for one the runtime could not exec.
 */
const PROBE_MESSAGE = /^(Readiness|Liveness|Startup) probe (failed|errored): ([\s\S]*)$/;

/** Which executable the output says is missing, in the shapes bash, sh and the runtime print. */
function missingIn(output: string): string | undefined {
  for (const exe of PROBE_EXECUTABLES) {
    const name = `(?:^|[\\s/:"'])${exe}`;
    if (new RegExp(`${name}:? (?:command )?not found`, 'i').test(output)) return exe;
    if (new RegExp(`${name}"?:? ?(?:: )?no such file or directory`, 'i').test(output)) return exe;
    if (new RegExp(`exec: "${exe}": executable file not found`, 'i').test(output)) return exe;
  }
  return undefined;
}

/**
 * Pure: the probe failures that say the image lacks an executable KubeRay's probes run (wget, bash,
 * ray), read from the kubelet's Unhealthy events. One such failure is final (the image will not
 * gain wget on a retry), so join fails at the first one instead of waiting out its deadline.
 */
export function probeFailures(events: readonly EventLike[]): PodFailure[] {
  const failures: PodFailure[] = [];
  const seen = new Set<string>();
  for (const e of events) {
    if (e.reason !== 'Unhealthy' || e.involvedObject?.kind !== 'Pod') continue;
    const m = PROBE_MESSAGE.exec((e.message ?? '').trim());
    if (!m) continue;
    const exe = missingIn(m[3] ?? '');
    if (!exe) continue;
    const pod = e.involvedObject.name ?? '?';
    const container = /spec\.containers\{(.+)\}/.exec(e.involvedObject.fieldPath ?? '')?.[1] ?? '?';
    if (seen.has(`${pod}/${exe}`)) continue;
    seen.add(`${pod}/${exe}`);
    failures.push({
      type: ErrorTypes.ImageContractUnmet,
      pod,
      container,
      message: `pod ${pod}, container ${container}: KubeRay's ${m[1]!.toLowerCase()} probe cannot run ${exe}, the image lacks it (${m[1]} probe ${m[2]}: ${(m[3] ?? '').trim().slice(0, 300)}). KubeRay probes Ray containers with bash and wget: install ${exe} in the image (apt-get install -y ${exe === 'ray' ? 'python3 && pip install ray' : exe}), or build FROM a rayproject/ray base, which has bash, wget and ray`,
    });
  }
  return failures;
}
