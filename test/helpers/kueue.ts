import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
  loadAllYaml,
} from '@kubernetes/client-node';
import { freePorts } from '../../src/backends/local/ports.js';
import { shellVar } from './kube-env.js';

const run = promisify(execFile);

/**
 * The real Kueue controller (v0.17.0, built from its Go module by scripts/k8s/build.sh), run out of
 * cluster against the test kube-apiserver with the admin kubeconfig, with only its RayCluster
 * integration on. Its CRDs and webhook configurations come from the module cache (never copied
 * into the repo), adjusted as Kueue's own kustomization adjusts them (names prefixed `kueue-`,
 * namespace kueue-system, conversion webhooks on the CRDs that have them), and cut to the webhooks
 * this configuration serves (Kueue's own kinds and RayCluster: a webhook for a disabled
 * integration, pods for one, would answer 404 and fail every Pod create).
 *
 * Its webhooks are reached the way a cluster reaches them: through the Service
 * kueue-system/kueue-webhook-service, which has no selector; its Endpoints and EndpointSlice name a
 * non-loopback address of this machine (Endpoints validation refuses loopback) and the webhook
 * server's port. The test kube-apiserver runs with --enable-aggregator-routing, so it calls a
 * webhook Service at its endpoints instead of its ClusterIP (no kube-proxy here). Kueue's internal
 * cert management makes its own CA and serving certificate (SAN kueue-webhook-service.kueue-system.svc)
 * into the Secret kueue-webhook-server-cert and injects the caBundle into the webhook
 * configurations and CRDs itself. In a cluster the kubelet mounts that Secret at the webhook's
 * certDir, and Kueue waits for the files there; here this helper plays that volume (it copies the
 * Secret's keys into certDir, and again when they change).
 *
 * It also plays kube-controller-manager's garbage collector for Kueue's Workloads (the stand-in
 * kubelet's collects Pods and Services only): a Workload whose owner RayCluster is gone is deleted
 * (background propagation), which is how a deleted cluster's quota is given back in a cluster.
 */
export interface RunningKueue {
  logPath: string;
  pid: number;
  /** When the webhooks first answered through the apiserver (ms since the process started). */
  readyMs: number;
  stop(): Promise<void>;
}

export const KUEUE_NAMESPACE = 'kueue-system';
const SERVICE = 'kueue-webhook-service';
const SECRET = 'kueue-webhook-server-cert';
/** The CRDs Kueue's kustomization gives a conversion webhook (config/components/crd/patches). */
const CONVERTED = ['localqueues', 'clusterqueues', 'cohorts', 'workloads', 'multikueueclusters'];

export async function kueueBinary(): Promise<string | undefined> {
  const bin = join(await shellVar('KUEUE_BIN'), 'kueue');
  return existsSync(bin) ? bin : undefined;
}

async function kueueModuleDir(): Promise<string> {
  const version = await shellVar('KUEUE_VERSION');
  const { stdout } = await run(
    '/usr/local/go/bin/go',
    ['mod', 'download', '-json', `sigs.k8s.io/kueue@${version}`],
    {
      cwd: tmpdir(),
      env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
    },
  );
  const dir = (JSON.parse(stdout) as { Dir?: string }).Dir;
  if (!dir || !existsSync(dir))
    throw new Error(`sigs.k8s.io/kueue@${version} is not in the module cache: run bash scripts/k8s/build.sh`);
  return dir;
}

/** A non-loopback IPv4 address of this machine: the webhook Service's endpoint. */
function hostAddress(): string {
  for (const addrs of Object.values(networkInterfaces()))
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('no non-loopback IPv4 address on this machine for the Kueue webhook endpoint');
}

type Webhook = {
  name: string;
  clientConfig: { service?: { name: string; namespace: string; path?: string } };
};
type WebhookConfiguration = KubernetesObject & { webhooks?: Webhook[] };

/** Kueue's CRDs with the conversion webhook its kustomization adds. */
async function crds(moduleDir: string): Promise<KubernetesObject[]> {
  const dir = join(moduleDir, 'config', 'components', 'crd', 'bases');
  const out: KubernetesObject[] = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const crd of loadAllYaml(await readFile(join(dir, file), 'utf8')) as (KubernetesObject & {
      spec: { names: { plural: string }; conversion?: unknown };
    })[]) {
      if (CONVERTED.includes(crd.spec.names.plural)) {
        crd.spec.conversion = {
          strategy: 'Webhook',
          webhook: {
            clientConfig: {
              service: { namespace: KUEUE_NAMESPACE, name: SERVICE, path: '/convert', port: 443 },
            },
            conversionReviewVersions: ['v1'],
          },
        };
      }
      out.push(crd);
    }
  }
  return out;
}

/** The webhook configurations under the names Kueue's cert controller injects into. */
async function webhookConfigurations(moduleDir: string): Promise<WebhookConfiguration[]> {
  const path = join(moduleDir, 'config', 'components', 'webhook', 'manifests.yaml');
  const served = (w: Webhook) =>
    /kueue-x-k8s-io|ray-io-v1-raycluster$/.test(w.clientConfig.service?.path ?? '');
  return (loadAllYaml(await readFile(path, 'utf8')) as WebhookConfiguration[]).map((c) => ({
    ...c,
    metadata: { name: `kueue-${c.metadata?.name ?? ''}` },
    webhooks: (c.webhooks ?? []).filter(served).map((w) => ({
      ...w,
      clientConfig: {
        service: { namespace: KUEUE_NAMESPACE, name: SERVICE, path: w.clientConfig.service?.path, port: 443 },
      },
    })),
  }));
}

function configuration(ports: { webhook: number; health: number; metrics: number }, certDir: string): string {
  return `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: ${KUEUE_NAMESPACE}
health:
  healthProbeBindAddress: 127.0.0.1:${ports.health}
metrics:
  bindAddress: 127.0.0.1:${ports.metrics}
webhook:
  port: ${ports.webhook}
  certDir: ${certDir}
leaderElection:
  leaderElect: false
# The visibility API is an aggregated API server that needs in-cluster delegated authentication;
# the product reads a cluster's place in the queue from the Workloads instead.
featureGates:
  VisibilityOnDemand: false
manageJobsWithoutQueueName: false
internalCertManagement:
  enable: true
  webhookServiceName: ${SERVICE}
  webhookSecretName: ${SECRET}
integrations:
  frameworks:
  - ray.io/raycluster
`;
}

/** The kubelet's Secret volume: the Secret's keys as files in `dir`, rewritten whenever they change. */
function mountSecret(kc: KubeConfig, dir: string): { stop(): Promise<void> } {
  const core = kc.makeApiClient(CoreV1Api);
  let running = true;
  let seen = '';
  const loop = (async () => {
    await mkdir(dir, { recursive: true });
    while (running) {
      const secret = await core
        .readNamespacedSecret({ name: SECRET, namespace: KUEUE_NAMESPACE })
        .catch(() => undefined);
      const data = secret?.data ?? {};
      const version = secret?.metadata?.resourceVersion ?? '';
      if (data['tls.crt'] && version !== seen) {
        for (const [key, value] of Object.entries(data)) {
          await writeFile(join(dir, `.${key}.tmp`), Buffer.from(value, 'base64'), { mode: 0o600 });
          await rename(join(dir, `.${key}.tmp`), join(dir, key));
        }
        seen = version;
      }
      await sleep(500);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** Every second: Workloads whose every owner is gone (404, or another uid) are deleted. */
function collectWorkloads(kc: KubeConfig): { stop(): Promise<void> } {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const objects = KubernetesObjectApi.makeApiClient(kc);
  let running = true;
  type Owned = {
    metadata: {
      name: string;
      namespace: string;
      deletionTimestamp?: string;
      ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string }[];
    };
  };
  const ownerGone = async (
    namespace: string,
    ref: { apiVersion: string; kind: string; name: string; uid: string },
  ) => {
    try {
      const owner = await objects.read({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, namespace },
      });
      return owner.metadata?.uid !== ref.uid;
    } catch (err) {
      return (err as { code?: number }).code === 404;
    }
  };
  const loop = (async () => {
    while (running) {
      const list = (await custom
        .listClusterCustomObject({ group: 'kueue.x-k8s.io', version: 'v1beta2', plural: 'workloads' })
        .catch(() => ({ items: [] }))) as { items: Owned[] };
      for (const w of list.items) {
        const refs = w.metadata.ownerReferences ?? [];
        if (!running || refs.length === 0 || w.metadata.deletionTimestamp) continue;
        let gone = true;
        for (const ref of refs) gone &&= await ownerGone(w.metadata.namespace, ref);
        if (!gone) continue;
        await custom
          .deleteNamespacedCustomObject({
            group: 'kueue.x-k8s.io',
            version: 'v1beta2',
            namespace: w.metadata.namespace,
            plural: 'workloads',
            name: w.metadata.name,
            propagationPolicy: 'Background',
          })
          .catch(() => undefined);
      }
      await sleep(1000);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

async function createAll(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const o of objects) await api.create(o);
}

/**
 * Install Kueue's CRDs, namespace, webhook Service (+ endpoints) and webhook configurations, start
 * the controller, and return once its webhooks answer through the apiserver (a dry-run create of a
 * ResourceFlavor passes Kueue's mutating and validating webhooks, whose failurePolicy is Fail).
 */
export async function startKueue(
  kc: KubeConfig,
  kubeconfig: string,
  timeoutMs = 180_000,
): Promise<RunningKueue> {
  const bin = await kueueBinary();
  if (!bin) throw new Error('kueue is not built: run bash scripts/k8s/build.sh (scripts/test.sh does it)');
  const moduleDir = await kueueModuleDir();
  const dir = await mkdtemp(join(tmpdir(), 'ragen-kueue-'));
  const [webhook, health, metrics] = (await freePorts(3)) as [number, number, number];
  const address = hostAddress();
  await createAll(kc, [
    ...(await crds(moduleDir)),
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KUEUE_NAMESPACE } },
    // Empty, as config/components/internalcert makes it: the cert controller fills it.
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: SECRET, namespace: KUEUE_NAMESPACE } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: SERVICE, namespace: KUEUE_NAMESPACE },
      spec: { ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: webhook }] },
    } as KubernetesObject,
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: SERVICE, namespace: KUEUE_NAMESPACE },
      subsets: [{ addresses: [{ ip: address }], ports: [{ name: 'https', port: webhook, protocol: 'TCP' }] }],
    } as KubernetesObject,
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${SERVICE}-host`,
        namespace: KUEUE_NAMESPACE,
        labels: {
          'kubernetes.io/service-name': SERVICE,
          'endpointslice.kubernetes.io/managed-by': 'ragen-tests',
        },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: 'https', port: webhook, protocol: 'TCP' }],
    } as KubernetesObject,
    ...(await webhookConfigurations(moduleDir)),
  ]);
  const configPath = join(dir, 'kueue-config.yaml');
  await writeFile(configPath, configuration({ webhook, health, metrics }, join(dir, 'certs')));
  const certs = mountSecret(kc, join(dir, 'certs'));
  const gc = collectWorkloads(kc);
  const logPath = join(dir, 'kueue.log');
  const log = await open(logPath, 'a');
  const started = Date.now();
  const child: ChildProcess = spawn(bin, [`--config=${configPath}`, '--zap-log-level=2'], {
    env: {
      KUBECONFIG: kubeconfig,
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: process.env['HOME'] ?? '/root',
    },
    stdio: ['ignore', log.fd, log.fd],
  });
  await log.close();
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await certs.stop();
    await gc.stop();
    if (!process.env['KEEP_KUBE_ENV']) await rm(dir, { recursive: true, force: true });
  };
  const api = KubernetesObjectApi.makeApiClient(kc);
  const probe = {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ResourceFlavor',
    metadata: { name: 'kueue-webhook-probe' },
  };
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (child.exitCode !== null) {
      const tail = (await readFile(logPath, 'utf8')).slice(-3000);
      await stop();
      throw new Error(`kueue exited with ${child.exitCode}\n${tail}`);
    }
    try {
      await api.create(probe, undefined, 'All');
      return { logPath, pid: child.pid ?? 0, readyMs: Date.now() - started, stop };
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      const tail = (await readFile(logPath, 'utf8')).slice(-3000);
      await stop();
      throw new Error(
        `Kueue's webhooks did not answer within ${timeoutMs / 1000} s (last: ${last})\n${tail}`,
      );
    }
    await sleep(500);
  }
}

/**
 * A ResourceFlavor `default`, a ClusterQueue `gpus` of `gpus` nvidia.com/gpu (CPU and memory
 * plenty) and a LocalQueue `queue` in `namespace` submitting to it; `preemption` as Kueue's field.
 */
export function gpuQueueObjects(
  namespace: string,
  queue: string,
  gpus: number,
  preemption?: Record<string, string>,
): KubernetesObject[] {
  return [
    { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name: 'default' } },
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ClusterQueue',
      metadata: { name: 'gpus' },
      spec: {
        namespaceSelector: {},
        ...(preemption ? { preemption } : {}),
        resourceGroups: [
          {
            coveredResources: ['cpu', 'memory', 'nvidia.com/gpu'],
            flavors: [
              {
                name: 'default',
                resources: [
                  { name: 'cpu', nominalQuota: '64' },
                  { name: 'memory', nominalQuota: '512Gi' },
                  { name: 'nvidia.com/gpu', nominalQuota: String(gpus) },
                ],
              },
            ],
          },
        ],
      },
    } as KubernetesObject,
    {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'LocalQueue',
      metadata: { name: queue, namespace },
      spec: { clusterQueue: 'gpus' },
    } as KubernetesObject,
  ];
}
