import type {
  V1ContainerState,
  V1ContainerStatus,
  V1PodCondition,
  V1PodStatus,
} from '@kubernetes/client-node';

/** Part of the stand-in kubelet: what it knows about one Pod, and the Pod status it writes (pure). */

export interface ContainerRecord {
  name: string;
  image: string;
  state: V1ContainerState;
  lastState?: V1ContainerState;
  restartCount: number;
  ready: boolean;
}

export interface PodRecord {
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  podIP?: string;
  hostIP: string;
  startTime: Date;
  initContainers: ContainerRecord[];
  containers: ContainerRecord[];
  reason?: string;
  message?: string;
  /** Condition values with the time each last changed (lastTransitionTime). */
  conditions: Map<string, { status: boolean; since: Date; reason?: string }>;
}

export const now = () => new Date();

export function waiting(reason: string, message?: string): V1ContainerState {
  return { waiting: { reason, ...(message ? { message } : {}) } };
}

export function newRecord(
  init: { name: string; image?: string }[],
  containers: { name: string; image?: string }[],
  hostIP: string,
): PodRecord {
  const rec = (c: { name: string; image?: string }, reason: string): ContainerRecord => ({
    name: c.name,
    image: c.image ?? '',
    state: waiting(reason),
    restartCount: 0,
    ready: false,
  });
  return {
    phase: 'Pending',
    hostIP,
    startTime: now(),
    initContainers: init.map((c, i) => rec(c, i === 0 ? 'ContainerCreating' : 'PodInitializing')),
    containers: containers.map((c) => rec(c, init.length > 0 ? 'PodInitializing' : 'ContainerCreating')),
    conditions: new Map(),
  };
}

function setCondition(r: PodRecord, type: string, status: boolean, reason?: string): void {
  const prev = r.conditions.get(type);
  if (prev?.status !== status) r.conditions.set(type, { status, since: now(), reason });
}

function containerStatus(c: ContainerRecord, podUid: string): V1ContainerStatus {
  return {
    name: c.name,
    image: c.image,
    // No image is pulled: the host's files play the image's (see index.ts).
    imageID: `standin://${c.image}`,
    containerID: `standin://${podUid}/${c.name}/${c.restartCount}`,
    ready: c.ready,
    started: c.state.running !== undefined,
    restartCount: c.restartCount,
    state: c.state,
    ...(c.lastState ? { lastState: c.lastState } : {}),
  };
}

/** The status subresource body: phase, addresses, conditions, container states. */
export function podStatus(r: PodRecord, podUid: string): V1PodStatus {
  const initialized = r.initContainers.every((c) => c.state.terminated?.exitCode === 0);
  const ready = r.phase === 'Running' && r.containers.every((c) => c.ready);
  setCondition(r, 'PodScheduled', true);
  setCondition(r, 'Initialized', initialized, initialized ? undefined : 'ContainersNotInitialized');
  setCondition(r, 'ContainersReady', ready, ready ? undefined : 'ContainersNotReady');
  setCondition(r, 'Ready', ready, ready ? undefined : 'ContainersNotReady');
  const conditions: V1PodCondition[] = ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'].map(
    (type) => {
      const c = r.conditions.get(type)!;
      return {
        type,
        status: c.status ? 'True' : 'False',
        lastTransitionTime: c.since,
        ...(c.reason ? { reason: c.reason } : {}),
      };
    },
  );
  return {
    phase: r.phase,
    hostIP: r.hostIP,
    hostIPs: [{ ip: r.hostIP }],
    ...(r.podIP ? { podIP: r.podIP, podIPs: [{ ip: r.podIP }] } : {}),
    startTime: r.startTime,
    conditions,
    ...(r.initContainers.length > 0
      ? { initContainerStatuses: r.initContainers.map((c) => containerStatus(c, podUid)) }
      : {}),
    containerStatuses: r.containers.map((c) => containerStatus(c, podUid)),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.message ? { message: r.message } : {}),
  };
}
