import { setTimeout as sleep } from 'node:timers/promises';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
  loadAllYaml,
} from '@kubernetes/client-node';
import { REPO_ROOT, loadConfig } from '../../src/config/config.js';
import { freePorts } from '../../src/backends/local/ports.js';
import { KubeletStandIn } from './kubelet-standin/index.js';
import { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import { IMAGE_USER } from './kubelet-standin/pod-spec.js';
import { KUBE_ENV } from './kubelet-standin/environment.js';
import { NODE_IP } from './kubelet-standin/pod-network.js';
import { KUBERNETES_SERVICE_IP } from './kubelet-standin/service-proxy.js';
import { type RunningOperator, operatorBinary, startKubeRayOperator } from './kuberay-operator.js';

const run = promisify(execFile);

/**
 * A real Kubernetes control plane for tests: etcd, kube-apiserver and the KubeRay operator v1.5.0,
 * built from their Go modules by scripts/k8s/build.sh into a cache outside the clone, started on
 * loopback, with the KubeRay CRDs of the same module version. No container runtime exists here,
 * so the scheduler, the kubelet and the garbage collector are played by the stand-in kubelet
 * (kubelet-standin/index.ts), which runs the operator's Pods as local processes in network
 * namespaces of their own. Identities: `admin` (static token, system:masters) and the service
 * account `ragen-restricted` (may only get/list/watch rayclusters), whose token comes from the
 * TokenRequest API. Storage: the PVC is bound to a hostPath PersistentVolume at `storageDir`, a
 * host directory that the test process and every Pod see at the same path (group 100, 2775).
 */
export interface KubeEnv {
  namespace: string;
  adminKubeconfig: string;
  restrictedKubeconfig: string;
  pvc: string;
  /** The host directory behind the PVC (its PersistentVolume's hostPath). */
  storageDir: string;
  /** The stand-in scheduler, kubelet and garbage collector; undefined with `kubelet: false`. */
  kubelet: KubeletStandIn | undefined;
  operatorLog: string | undefined;
  /** The operator's process and metrics (a bench measures them); undefined with `kubelet: false`. */
  operator: { pid: number; metricsUrl: string } | undefined;
  nodeName: string;
  /** Every stand-in node: nodeName first, then the extra ones. */
  nodeNames: string[];
  /** Allocatable nvidia.com/gpu on the stand-in node. */
  gpus: number;
  admin: KubeConfig;
  startMs: number;
  /** Stop kube-apiserver and start it again on the same port and etcd (state survives). */
  restartApiServer(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function shellVar(name: string): Promise<string> {
  const { stdout } = await run('bash', ['-c', `source scripts/k8s/versions.sh && echo "$${name}"`], {
    cwd: REPO_ROOT,
  });
  return stdout.trim();
}

/** Where build.sh puts etcd, kube-apiserver and the KubeRay operator; undefined when they are not built. */
export async function kubeBinaries(): Promise<
  { etcd: string; apiserver: string; operator: string } | undefined
> {
  const bin = await shellVar('K8S_BIN');
  const etcd = join(bin, 'etcd');
  const apiserver = join(bin, 'kube-apiserver');
  const operator = operatorBinary(await shellVar('KUBERAY_BIN'));
  return existsSync(etcd) && existsSync(apiserver) && operator ? { etcd, apiserver, operator } : undefined;
}

/** The KubeRay CRDs the operator watches, from its Go module in the module cache (never copied into the repo). */
const KUBERAY_CRDS = ['rayclusters', 'rayjobs', 'rayservices'];

async function kuberayCrdPaths(): Promise<string[]> {
  const version = await shellVar('KUBERAY_VERSION');
  let modcache = join(homedir(), 'go', 'pkg', 'mod');
  try {
    modcache = (await run('/usr/local/go/bin/go', ['env', 'GOMODCACHE'])).stdout.trim() || modcache;
  } catch {
    // Go not on this path: the default module cache
  }
  return KUBERAY_CRDS.map((plural) => {
    const path = join(
      modcache,
      'github.com',
      'ray-project',
      'kuberay',
      `ray-operator@${version}`,
      'config',
      'crd',
      'bases',
      `ray.io_${plural}.yaml`,
    );
    if (!existsSync(path))
      throw new Error(`${path} missing: run bash scripts/k8s/build.sh (it downloads the KubeRay module)`);
    return path;
  });
}

/** CA, serving certificate for 127.0.0.1 and the service-account key pair, made once and cached. */
async function certificates(): Promise<string> {
  const dir = join(await shellVar('K8S_CACHE'), 'certs');
  if (existsSync(join(dir, 'done'))) return dir;
  await mkdir(dir, { recursive: true });
  const ssl = (args: string[]) => run('openssl', args, { cwd: dir });
  await ssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '3650',
    '-subj',
    '/CN=ragen-test-ca',
  ]);
  await writeFile(
    join(dir, 'san.cnf'),
    `subjectAltName=IP:127.0.0.1,DNS:localhost,IP:${KUBERNETES_SERVICE_IP}\n`,
  );
  await ssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=kube-apiserver',
  ]);
  await ssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '3650',
    '-extfile',
    'san.cnf',
  ]);
  await ssl(['genrsa', '-out', 'sa.key', '2048']);
  await ssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  await writeFile(join(dir, 'done'), '');
  return dir;
}

function kubeconfigYaml(server: string, ca: string, token: string, user: string): string {
  return `apiVersion: v1
kind: Config
clusters: [{name: ragen-test, cluster: {server: "${server}", certificate-authority: "${ca}"}}]
users: [{name: ${user}, user: {token: "${token}"}}]
contexts: [{name: ragen-test, context: {cluster: ragen-test, user: ${user}, namespace: ragen-test}}]
current-context: ragen-test
`;
}

async function spawnLogged(bin: string, args: string[], logPath: string): Promise<ChildProcess> {
  const log = await open(logPath, 'a');
  const child = spawn(bin, args, { stdio: ['ignore', log.fd, log.fd] });
  await log.close();
  return child;
}

async function waitReady(
  url: string,
  ca: Buffer,
  token: string,
  timeoutMs: number,
  child: ChildProcess,
  logPath: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `${url}: process exited with ${child.exitCode}; see ${logPath}\n${(await readFile(logPath, 'utf8')).slice(-3000)}`,
      );
    const ok = await new Promise<boolean>((done) => {
      const req = request(
        url,
        { ca, headers: { authorization: `Bearer ${token}` }, timeout: 2000 },
        (res) => {
          res.resume();
          done(res.statusCode === 200);
        },
      );
      req.on('error', () => done(false));
      req.on('timeout', () => req.destroy());
      req.end();
    });
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`${url} not ready within ${timeoutMs / 1000} s; see ${logPath}`);
    await sleep(250);
  }
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function createAll(kc: KubeConfig, objects: KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const o of objects) await api.create(o);
}

export const STANDIN_NODE = 'standin-gpu-node';

/**
 * Start etcd + kube-apiserver, install the KubeRay CRDs, a namespace, a GPU node, a PV + PVC and
 * the identities, then the KubeRay operator and the stand-in kubelet (`kubelet: false` leaves both
 * out, for tests that need only the API).
 */
export async function startKubeEnv(
  options: {
    namespace?: string;
    gpus?: number;
    kubelet?: boolean;
    storageDir?: string;
    /** More stand-in nodes like the first (`standin-gpu-node-2`, ...), each with `gpus`. */
    extraNodes?: number;
    /**
     * The operator resolves Services' cluster DNS names (`<svc>.<ns>.svc.cluster.local`), as it
     * does in a cluster: it runs in a mount namespace of its own whose /etc/hosts the stand-in
     * kubelet keeps current. A RayJob in HTTPMode needs it (the operator submits to the head
     * Service's dashboard port); the product never does (its worker reads status.head.podIP).
     */
    operatorClusterDns?: boolean;
  } = {},
): Promise<KubeEnv> {
  const started = Date.now();
  const bins = await kubeBinaries();
  if (!bins)
    throw new Error(
      'etcd/kube-apiserver/kuberay-operator are not built: run bash scripts/k8s/build.sh (scripts/test.sh does it)',
    );
  const namespace = options.namespace ?? 'ragen-test';
  const gpus = options.gpus ?? 2;
  const nodeNames = [
    STANDIN_NODE,
    ...Array.from({ length: options.extraNodes ?? 0 }, (_, i) => `${STANDIN_NODE}-${i + 2}`),
  ];
  const certs = await certificates();
  const dir = await mkdtemp(join(tmpdir(), 'ragen-kube-'));
  const adminToken = `admin-${process.pid}-${Date.now()}`;
  await writeFile(join(dir, 'tokens.csv'), `${adminToken},admin,admin-uid,"system:masters"\n`);
  const [etcdClient, etcdPeer, securePort] = (await freePorts(3)) as [number, number, number];
  const etcdLog = join(dir, 'etcd.log');
  const apiLog = join(dir, 'kube-apiserver.log');
  const etcd = await spawnLogged(
    bins.etcd,
    [
      '--name=default',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ],
    etcdLog,
  );
  const apiArgs = [
    `--etcd-servers=http://127.0.0.1:${etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${securePort}`,
    `--cert-dir=${join(dir, 'apiserver-certs')}`,
    `--tls-cert-file=${join(certs, 'server.crt')}`,
    `--tls-private-key-file=${join(certs, 'server.key')}`,
    `--client-ca-file=${join(certs, 'ca.crt')}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${join(certs, 'sa.pub')}`,
    `--service-account-signing-key-file=${join(certs, 'sa.key')}`,
    `--service-cluster-ip-range=${KUBE_ENV.serviceSubnetPrefix}.0/24`,
    '--allow-privileged=true',
    '--disable-admission-plugins=ServiceAccount',
    '--enable-priority-and-fairness=false',
    // Webhooks behind a Service (Kueue's) are called at the Service's endpoints, not its ClusterIP:
    // no kube-proxy routes ClusterIPs here (test/helpers/kueue.ts).
    '--enable-aggregator-routing=true',
    '--v=0',
  ];
  let apiserver: ChildProcess | undefined;
  let operator: RunningOperator | undefined;
  let kubelet: KubeletStandIn | undefined;
  const storageDir = options.storageDir ?? (await mkdtemp(join(tmpdir(), 'ragen-kuberay-')));
  // The volume as an administrator prepares it for a rayproject image (uid 1000, group 100, which
  // the stand-in kubelet runs every Pod as by default): group 100, 2775, so the Pods' user writes
  // there and what it makes keeps the group. mkdtemp's 0700 would shut every non-root Pod out.
  if (!options.storageDir) {
    await chown(storageDir, 0, IMAGE_USER.gid);
    await chmod(storageDir, 0o2775);
  }
  const server = `https://127.0.0.1:${securePort}`;
  const ca = await readFile(join(certs, 'ca.crt'));
  const startApiServer = async () => {
    apiserver = await spawnLogged(bins.apiserver, apiArgs, apiLog);
    await waitReady(`${server}/readyz`, ca, adminToken, 120_000, apiserver, apiLog);
  };
  const stop = async () => {
    await kubelet?.stop();
    await operator?.stop();
    await stopProcess(apiserver);
    await stopProcess(etcd);
    if (!process.env['KEEP_KUBE_ENV']) await rm(dir, { recursive: true, force: true });
    if (!process.env['KEEP_KUBE_ENV'] && !options.storageDir)
      await rm(storageDir, { recursive: true, force: true });
  };
  try {
    await startApiServer();
    const adminKubeconfig = join(dir, 'admin.kubeconfig');
    await writeFile(adminKubeconfig, kubeconfigYaml(server, join(certs, 'ca.crt'), adminToken, 'admin'));
    const admin = new KubeConfig();
    admin.loadFromFile(adminKubeconfig);

    // loadAllYaml deserializes into client-node's models, which keep x-kubernetes-* extensions on create.
    const crds: KubernetesObject[] = [];
    for (const path of await kuberayCrdPaths())
      crds.push(...(loadAllYaml(await readFile(path, 'utf8')) as KubernetesObject[]));
    const pvc = 'ragen-storage';
    await createAll(admin, [
      ...crds,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ragen-restricted', namespace } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'rayclusters-read-only', namespace },
        rules: [{ apiGroups: ['ray.io'], resources: ['rayclusters'], verbs: ['get', 'list', 'watch'] }],
      } as KubernetesObject,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'ragen-restricted-read-only', namespace },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'rayclusters-read-only' },
        subjects: [{ kind: 'ServiceAccount', name: 'ragen-restricted', namespace }],
      } as KubernetesObject,
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: pvc, namespace },
        spec: {
          accessModes: ['ReadWriteMany'],
          storageClassName: '',
          volumeName: `${namespace}-${pvc}`,
          resources: { requests: { storage: '1Gi' } },
        },
      } as KubernetesObject,
      {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: `${namespace}-${pvc}` },
        spec: {
          accessModes: ['ReadWriteMany'],
          capacity: { storage: '1Gi' },
          storageClassName: '',
          hostPath: { path: storageDir, type: 'Directory' },
          claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name: pvc },
        },
      } as KubernetesObject,
      ...nodeNames.map((name) => ({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          labels: {
            'ragen.dev/stand-in': 'true',
            'kubernetes.io/hostname': name,
            'kubernetes.io/os': 'linux',
          },
        },
      })),
    ]);
    // A kubelet would report capacity and the PV controller would bind the claim; here both go
    // through the status subresources.
    const core = admin.makeApiClient(CoreV1Api);
    for (const name of nodeNames) {
      const node = await core.readNode({ name });
      const capacity = { cpu: '16', memory: '64Gi', pods: '110', 'nvidia.com/gpu': String(gpus) };
      node.status = {
        capacity,
        allocatable: capacity,
        addresses: [{ type: 'InternalIP', address: NODE_IP }],
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
      };
      await core.replaceNodeStatus({ name, body: node });
    }
    const pv = await core.readPersistentVolume({ name: `${namespace}-${pvc}` });
    pv.status = { phase: 'Bound' };
    await core.replacePersistentVolumeStatus({ name: `${namespace}-${pvc}`, body: pv });
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: pvc, namespace });
    claim.status = { phase: 'Bound', accessModes: ['ReadWriteMany'], capacity: { storage: '1Gi' } };
    await core.replaceNamespacedPersistentVolumeClaimStatus({ name: pvc, namespace, body: claim });
    await waitCrdEstablished(admin);
    if (options.kubelet !== false) {
      const hostsFile = options.operatorClusterDns ? join(dir, 'operator-hosts') : undefined;
      if (hostsFile) await writeFile(hostsFile, '127.0.0.1\tlocalhost\n');
      kubelet = new KubeletStandIn({
        kc: admin,
        nodeName: STANDIN_NODE,
        extraNodes: nodeNames.slice(1),
        venvBin: dirname(loadConfig().rayBin),
        hostHostsFile: hostsFile,
      });
      await kubelet.start();
      operator = await startKubeRayOperator(
        bins.operator,
        adminKubeconfig,
        join(dir, 'kuberay-operator.log'),
        undefined,
        { hostsFile },
      );
    }

    const token = await core.createNamespacedServiceAccountToken({
      name: 'ragen-restricted',
      namespace,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const restrictedKubeconfig = join(dir, 'restricted.kubeconfig');
    await writeFile(
      restrictedKubeconfig,
      kubeconfigYaml(server, join(certs, 'ca.crt'), token.status?.token ?? '', 'ragen-restricted'),
    );
    return {
      namespace,
      adminKubeconfig,
      restrictedKubeconfig,
      pvc,
      storageDir,
      kubelet,
      operatorLog: operator?.logPath,
      operator: operator && { pid: operator.pid, metricsUrl: operator.metricsUrl },
      nodeName: STANDIN_NODE,
      nodeNames,
      gpus,
      admin,
      startMs: Date.now() - started,
      async restartApiServer(downMs = 2000) {
        await stopProcess(apiserver);
        await sleep(downMs);
        await startApiServer();
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitCrdEstablished(kc: KubeConfig): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const deadline = Date.now() + 30_000;
  for (const plural of KUBERAY_CRDS) {
    for (;;) {
      const crd = (await api.read({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `${plural}.ray.io` },
      })) as KubernetesObject & {
        status?: { conditions?: { type: string; status: string }[] };
      };
      if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${plural}.ray.io not established within 30 s`);
      await sleep(200);
    }
  }
}

/** The kuberay backend as the tests' worker uses it: the env's admin identity, the venv's python. */
export function adminBackend(kube: KubeEnv): KubeRayBackend {
  return new KubeRayBackend({
    namespace: kube.namespace,
    kubeconfig: kube.adminKubeconfig,
    dashboard: 'head-status',
    python: loadConfig().python,
    pollMs: 500,
  });
}
