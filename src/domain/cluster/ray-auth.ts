import { z } from 'zod';

/** The first Ray release with token authentication (RAY_AUTH_MODE=token). */
export const RAY_AUTH_MIN_VERSION = '2.52.0';

/**
 * `auth`: the product turns Ray's token authentication on for every cluster it makes (unset or
 * `token`). `none` (kuberay only) runs the cluster without it, for an image whose Ray predates
 * token auth: anyone who reaches the head's ports can then submit jobs. The manifest records it
 * (resolvedSpec.auth).
 */
export const RayAuthSchema = z.enum(['token', 'none']);
export type RayAuth = z.infer<typeof RayAuthSchema>;

const parts = (v: string) => v.split('.').map(Number);

/** Whether Ray `version` (x.y.z) is older than `than`. */
export function rayOlderThan(version: string, than: string): boolean {
  const [a, b] = [parts(version), parts(than)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/** Load-time rules of `auth` against the backend and the image's Ray version. */
export function rayAuthIssues(spec: {
  backend: 'local' | 'kuberay';
  rayVersion: string;
  auth?: RayAuth;
}): { path: (string | number)[]; message: string }[] {
  if (spec.auth === 'none' && spec.backend === 'local')
    return [
      {
        path: ['auth'],
        message:
          "auth: none applies to the kuberay backend only; a local cluster runs the worker's own Ray, which has token auth: remove auth",
      },
    ];
  if (spec.auth !== 'none' && rayOlderThan(spec.rayVersion, RAY_AUTH_MIN_VERSION))
    return [
      {
        path: ['auth'],
        message: `rayVersion ${spec.rayVersion} has no token authentication (Ray ${RAY_AUTH_MIN_VERSION} added it), which the product turns on for every cluster; use an image with Ray >= ${RAY_AUTH_MIN_VERSION}, or write auth: none to run this cluster without authentication (anyone who reaches its ports can submit jobs; the manifest records it)`,
      },
    ];
  return [];
}
