import { ErrorTypes } from '../../domain/failures/error-types.js';

/** The parts of a Pod (as the kubelet writes its status) that say why a Ray pod cannot run. */
export interface ContainerStatusLike {
  name: string;
  image?: string;
  restartCount?: number;
  ready?: boolean;
  state?: {
    waiting?: { reason?: string; message?: string };
    running?: { startedAt?: string };
    terminated?: { exitCode?: number; reason?: string; message?: string };
  };
  lastState?: { terminated?: { exitCode?: number; reason?: string; message?: string; finishedAt?: string } };
}

export interface PodLike {
  metadata?: {
    name?: string;
    uid?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string | Date;
  };
  spec?: {
    containers?: { name: string; image?: string }[];
    initContainers?: { name: string; image?: string }[];
  };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: ContainerStatusLike[];
    initContainerStatuses?: ContainerStatusLike[];
  };
}

export interface PodFailure {
  type:
    | typeof ErrorTypes.ImagePullFailed
    | typeof ErrorTypes.PodCrashLooping
    | typeof ErrorTypes.PodConfigInvalid
    | typeof ErrorTypes.ImageContractUnmet;
  pod: string;
  container: string;
  message: string;
}

/** kubelet waiting reasons for an image it cannot get (pkg/kubelet/images). */
const IMAGE_PULL_REASONS = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'ImageInspectError',
]);
/** A container the kubelet cannot even create: its env names a Secret or key that does not exist. */
const CONFIG_REASONS = new Set(['CreateContainerConfigError', 'CreateContainerError']);
/** Restarts that count as a loop even between two back-offs (when the state reads running). */
const CRASH_LOOP_RESTARTS = 3;

function lastExit(s: ContainerStatusLike): string {
  const t = s.lastState?.terminated ?? s.state?.terminated;
  if (!t) return 'no exit recorded';
  return `last exit code ${t.exitCode ?? '?'}${t.reason ? ` (${t.reason})` : ''}${t.message ? `: ${t.message.trim().slice(0, 300)}` : ''}`;
}

function containerFailure(
  pod: string,
  kind: string,
  s: ContainerStatusLike,
  image: string | undefined,
): PodFailure | undefined {
  const waiting = s.state?.waiting;
  const reason = waiting?.reason ?? '';
  const where = `pod ${pod}, ${kind} ${s.name}`;
  if (IMAGE_PULL_REASONS.has(reason)) {
    const img = image ?? s.image ?? '?';
    return {
      type: ErrorTypes.ImagePullFailed,
      pod,
      container: s.name,
      message: `the kubelet cannot pull image ${img} (${where}: ${reason}${waiting?.message ? `: ${waiting.message}` : ''}); check that the digest exists in that registry, that the nodes can reach it, and that kuberay.imagePullSecrets names a Secret with credentials for it`,
    };
  }
  if (CONFIG_REASONS.has(reason)) {
    return {
      type: ErrorTypes.PodConfigInvalid,
      pod,
      container: s.name,
      message: `the kubelet cannot create ${where} (${reason}${waiting?.message ? `: ${waiting.message}` : ''}); create the Secret or key it names, or fix kuberay.env / kuberay.envFrom`,
    };
  }
  const missing = missingExecutable(s);
  if (missing) {
    return {
      type: ErrorTypes.ImageContractUnmet,
      pod,
      container: s.name,
      message: `${where}: ${missing}. KubeRay runs its containers through bash (\`ray start\`, \`ray health-check\`) and probes them with bash and wget: the image needs bash, wget and ray on its default PATH (rayproject images have all three; an image that installs Ray into a conda env must put that env's bin first on PATH)`,
    };
  }
  const restarts = s.restartCount ?? 0;
  const exited = s.lastState?.terminated ?? s.state?.terminated;
  const failedExit = exited !== undefined && exited.exitCode !== 0;
  if (reason === 'CrashLoopBackOff' || (restarts >= CRASH_LOOP_RESTARTS && failedExit)) {
    return {
      type: ErrorTypes.PodCrashLooping,
      pod,
      container: s.name,
      message: `${where} is crash-looping (restarted ${restarts} times, ${lastExit(s)}); read its log with kubectl logs ${pod} -c ${s.name} --previous`,
    };
  }
  return undefined;
}

/**
 * A container whose command is not in the image: the runtime could not exec it (no bash: a
 * StartError/RunContainerError saying "no such file" or "not found"), or bash ran and exited 127
 * (a command, `ray` here, not on the PATH). Deterministic, so the first exit says it: no restarts
 * are waited for.
 */
function missingExecutable(s: ContainerStatusLike): string | undefined {
  const t = s.state?.terminated ?? s.lastState?.terminated;
  const waiting = s.state?.waiting;
  const startFailed = [
    [t?.reason, t?.message],
    [waiting?.reason, waiting?.message],
  ].find(
    ([reason, message]) =>
      /^(StartError|RunContainerError|ContainerCannotRun)$/.test(reason ?? '') &&
      /no such file|not found/i.test(message ?? ''),
  );
  if (startFailed)
    return `the runtime could not start it (${startFailed[0]}: ${(startFailed[1] ?? '').trim().slice(0, 300)})`;
  if (t?.exitCode === 127)
    return `it exited 127, a command not found on the image's PATH${t.message ? ` (${t.message.trim().slice(0, 300)})` : ''}`;
  return undefined;
}

/**
 * Pure: what stops Ray pods for good, read from Pod status as the kubelet writes it: an image it
 * cannot pull (names the image), a container it cannot create (a missing Secret), a container that
 * keeps exiting (names it and its last exit). Pods being deleted are skipped: the operator replaces them.
 */
export function podFailures(pods: readonly PodLike[]): PodFailure[] {
  const failures: PodFailure[] = [];
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp) continue;
    const name = pod.metadata?.name ?? '?';
    const images = new Map(
      [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])].map((c) => [c.name, c.image]),
    );
    for (const [kind, statuses] of [
      ['init container', pod.status?.initContainerStatuses],
      ['container', pod.status?.containerStatuses],
    ] as const) {
      for (const s of statuses ?? []) {
        const failure = containerFailure(name, kind, s, images.get(s.name));
        if (failure) failures.push(failure);
      }
    }
  }
  return failures;
}

/** Why pods are still Pending (e.g. Unschedulable: Insufficient nvidia.com/gpu), for waiting messages. */
export function podsWaiting(pods: readonly PodLike[]): string[] {
  const notes: string[] = [];
  for (const pod of pods) {
    if (pod.status?.phase !== 'Pending' || pod.metadata?.deletionTimestamp) continue;
    const scheduled = pod.status.conditions?.find((c) => c.type === 'PodScheduled');
    if (scheduled?.status === 'False') {
      notes.push(
        `pod ${pod.metadata?.name ?? '?'} not scheduled (${scheduled.reason ?? ''}${scheduled.message ? `: ${scheduled.message}` : ''})`,
      );
    }
  }
  return notes;
}
