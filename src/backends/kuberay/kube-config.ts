import { existsSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

/** Where the kubelet mounts a Pod's service account token, CA certificate and namespace. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * A Pod's own identity is there: KUBERNETES_SERVICE_HOST (the kubelet sets it in every container)
 * and the token file. `root` prefixes the path, for tests.
 */
export function inCluster(env: NodeJS.ProcessEnv = process.env, root = ''): boolean {
  return Boolean(env['KUBERNETES_SERVICE_HOST']) && existsSync(`${root}${SERVICE_ACCOUNT_DIR}/token`);
}

/**
 * Kubeconfig in this order: an explicit file (RAGEN_KUBECONFIG), KUBECONFIG, the in-cluster
 * service account, ~/.kube/config. In a Pod the service account comes before ~/.kube/config:
 * the worker Deployment's identity is the one its RBAC was written for, whatever the image holds.
 * The token stays a file that client-node re-reads every 60 s, so the kubelet's rotation is picked up.
 */
export function loadKubeConfig(path?: string, serviceAccountRoot = ''): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  // client-node reads KUBERNETES_SERVICE_HOST/PORT from process.env itself.
  else if (!process.env['KUBECONFIG'] && inCluster(process.env, serviceAccountRoot))
    kc.loadFromCluster(serviceAccountRoot);
  else kc.loadFromDefault();
  if (!kc.getCurrentCluster())
    throw new Error(
      'no Kubernetes cluster configured: set KUBECONFIG, RAGEN_KUBECONFIG, or run in a pod with a service account',
    );
  return kc;
}
