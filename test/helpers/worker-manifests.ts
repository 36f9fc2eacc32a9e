import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import {
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
} from '@kubernetes/client-node';
import { REPO_ROOT } from '../../src/config/config.js';
import { shellVar } from './kube-env.js';

const run = promisify(execFile);

/** What a user's overlay of deploy/worker says: the namespace, strategic-merge and JSON patches. */
export interface WorkerOverlay {
  namespace: string;
  patches?: KubernetesObject[];
  /** RFC 6902 operations on one object of the base. */
  jsonPatches?: { target: { kind: string; name: string }; ops: object[] }[];
}

/**
 * deploy/worker rendered by the real kustomize (built by scripts/k8s/build.sh), through an overlay
 * as a user writes one: the base listed under `resources`, `namespace`, inline patches.
 */
export async function renderWorkerManifests(overlay: WorkerOverlay): Promise<KubernetesObject[]> {
  const kustomize = join(await shellVar('KUSTOMIZE_BIN'), 'kustomize');
  if (!existsSync(kustomize)) throw new Error(`${kustomize} missing: run bash scripts/k8s/build.sh`);
  const dir = await mkdtemp(join(tmpdir(), 'ragen-overlay-'));
  try {
    // kustomize takes a base only by a path relative to the overlay.
    const kustomization = {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [relative(dir, join(REPO_ROOT, 'deploy', 'worker'))],
      namespace: overlay.namespace,
      patches: [
        ...(overlay.patches ?? []).map((p) => ({ patch: JSON.stringify(p) })),
        ...(overlay.jsonPatches ?? []).map((p) => ({ target: p.target, patch: JSON.stringify(p.ops) })),
      ],
    };
    await writeFile(join(dir, 'kustomization.yaml'), JSON.stringify(kustomization));
    const { stdout } = await run(kustomize, ['build', dir], { maxBuffer: 16 * 1024 * 1024 });
    return loadAllYaml(stdout) as KubernetesObject[];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Create every object as admin, or replace it when it exists (a test re-applies a changed Role). */
export async function applyAll(admin: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(admin);
  for (const o of objects) {
    try {
      await api.create(o);
    } catch (err) {
      if ((err as { code?: number }).code !== 409) throw err;
      await api.replace(o);
    }
  }
}

/** A kubeconfig file for a ServiceAccount, its token from the TokenRequest API. */
export async function serviceAccountKubeconfig(
  admin: KubeConfig,
  namespace: string,
  name: string,
): Promise<{ kc: KubeConfig; path: string }> {
  const { status } = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token: status?.token }],
    contexts: [{ name: 'sa', cluster: cluster.name, user: name, namespace }],
    currentContext: 'sa',
  });
  const path = join(tmpdir(), `ragen-${namespace}-${name}-${process.pid}.kubeconfig`);
  await writeFile(path, kc.exportConfig(), { mode: 0o600 });
  return { kc, path };
}
