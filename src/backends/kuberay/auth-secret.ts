import { randomBytes } from 'node:crypto';
import type { ClusterOwner } from '../../domain/cluster/cluster.js';
import { ownerAnnotations, ownerLabels } from './labels.js';

/**
 * Ray token authentication on KubeRay: KubeRay v1.5.0 has no `authOptions` (added in v1.5.1), so
 * the backend makes one Secret per RayCluster and the head and worker containers read the token
 * from it (secretKeyRef) with RAY_AUTH_MODE=token. The operator's probes need nothing: Ray 2.60
 * serves /api/gcs_healthz and /api/local_raylet_healthz without a token.
 */
export const AUTH_SECRET_KEY = 'auth_token';

const AUTH_SECRET_SUFFIX = '-ray-auth';

export function authSecretName(cluster: string): string {
  return `${cluster}${AUTH_SECRET_SUFFIX}`;
}

/** The cluster a token Secret's name belongs to; undefined for a name that is not one. */
export function clusterOfAuthSecret(secretName: string): string | undefined {
  return secretName.endsWith(AUTH_SECRET_SUFFIX) && secretName.length > AUTH_SECRET_SUFFIX.length
    ? secretName.slice(0, -AUTH_SECRET_SUFFIX.length)
    : undefined;
}

export interface SecretObject {
  apiVersion: 'v1';
  kind: 'Secret';
  type: 'Opaque';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: {
      apiVersion: string;
      kind: string;
      name: string;
      uid: string;
      controller?: boolean;
      blockOwnerDeletion?: boolean;
    }[];
    resourceVersion?: string;
  };
  data: Record<string, string>;
}

/** A new Secret with a fresh 256-bit token; the RayCluster becomes its owner once it exists. */
export function buildAuthSecret(cluster: string, namespace: string, owner: ClusterOwner): SecretObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: authSecretName(cluster),
      namespace,
      labels: ownerLabels(owner),
      annotations: ownerAnnotations(owner),
    },
    data: { [AUTH_SECRET_KEY]: Buffer.from(randomBytes(32).toString('hex')).toString('base64') },
  };
}

/** The token in a Secret read back from the API; undefined when the key is missing. */
export function tokenOf(secret: { data?: Record<string, string> }): string | undefined {
  const b64 = secret.data?.[AUTH_SECRET_KEY];
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}

interface HeadContainers {
  headGroupSpec?: { template?: { spec?: { containers?: { env?: { name?: string; value?: string }[] }[] } } };
}

/** Whether a RayCluster's head runs in token mode (the env withRayAuthEnv gave its containers). */
export function headUsesTokenAuth(cluster: { spec: Record<string, unknown> }): boolean {
  const containers = (cluster.spec as HeadContainers).headGroupSpec?.template?.spec?.containers ?? [];
  return containers.some((c) => (c.env ?? []).some((e) => e.name === 'RAY_AUTH_MODE' && e.value === 'token'));
}

/**
 * The container's env with token mode on, appended last so it wins over a user's `env` entry of
 * the same name; the value stays in the Secret.
 */
export function withRayAuthEnv<C extends { env?: unknown[] }>(container: C, cluster: string): C {
  return {
    ...container,
    env: [
      ...(container.env ?? []),
      { name: 'RAY_AUTH_MODE', value: 'token' },
      {
        name: 'RAY_AUTH_TOKEN',
        valueFrom: { secretKeyRef: { name: authSecretName(cluster), key: AUTH_SECRET_KEY } },
      },
    ],
  };
}
