import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildRayCluster } from '../../src/backends/kuberay/raycluster.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { parseQuantity } from '../../src/domain/cluster/quantity.js';
import { SpecError } from '../../src/domain/spec/spec-error.js';
import { kuberaySpecYaml, TEST_IMAGE } from '../helpers/kuberay-specs.js';
import { validSpecYaml } from '../helpers/specs.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const owner = { experiment: 'sokoban-test', workflowId: 'wf-1', runId: 'run-1', attempt: 0 };

/** The shared kuberay test spec with `extra` (YAML, indented under kuberay:) added. */
const withKuberay = (extra: string) => `${kuberaySpecYaml('/mnt/shared')}${extra.replace(/^/gm, '  ')}\n`;

function issues(yaml: string): string {
  try {
    parseExperimentSpec(yaml);
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    return err.issues.map((i) => `${i.field}: ${i.message}`).join('\n');
  }
  return '';
}

function build(extra: string) {
  const spec = parseExperimentSpec(withKuberay(extra));
  const rc = buildRayCluster({ name: 'sokoban-test-abcd1234-a0', namespace: 'training', spec, owner });
  const s = rc.spec as any;
  return { rc, head: s.headGroupSpec.template.spec, worker: s.workerGroupSpecs[0].template.spec };
}

const FULL = `
imagePullSecrets: [regcred]
securityContext: {runAsUser: 1000, runAsGroup: 100, fsGroup: 100}
priorityClassName: training-high
queueName: team-gpus
oneWorkerPerNode: true
env:
  WANDB_MODE: offline
  HF_HUB_OFFLINE: 1
  WANDB_API_KEY: {secret: wandb, key: api-key}
envFrom:
  - secret: hf-credentials
    prefix: HF_
head:
  workingDir: /workspace/RAGEN
  memory: 8Gi
  shmSize: 2Gi
  nodeSelector: {node-role.example/cpu: "true"}
workers:
  workingDir: /workspace/RAGEN
  memory: 64Gi
  memoryLimit: 96Gi
  cpuLimit: 8
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
  tolerations:
    - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
`;

describe('kuberay pod template fields in the RayCluster (pure builder)', () => {
  const { rc, head, worker } = build(FULL);
  const headC = head.containers[0];
  const workerC = worker.containers[0];

  it('sets the working directory of head and worker containers', () => {
    assert.equal(headC.workingDir, '/workspace/RAGEN');
    assert.equal(workerC.workingDir, '/workspace/RAGEN');
  });

  it('requests CPUs without a CPU limit unless cpuLimit asks; memory request = limit unless memoryLimit', () => {
    assert.deepEqual(headC.resources, { requests: { cpu: '1', memory: '8Gi' }, limits: { memory: '8Gi' } });
    assert.deepEqual(workerC.resources, {
      requests: { cpu: '1', memory: '64Gi', 'nvidia.com/gpu': '1' },
      limits: { cpu: '8', memory: '96Gi', 'nvidia.com/gpu': '1' },
    });
    const plain = build('').head.containers[0].resources;
    assert.deepEqual(
      plain,
      { requests: { cpu: '1' }, limits: {} },
      'no CPU limit by default (it used to be 1 core)',
    );
  });

  it('mounts an explicit /dev/shm of shmSize where asked (KubeRay then adds none), and leaves it to KubeRay elsewhere', () => {
    assert.deepEqual(
      head.volumes.find((v: any) => v.name === 'shared-mem'),
      { name: 'shared-mem', emptyDir: { medium: 'Memory', sizeLimit: '2Gi' } },
    );
    assert.ok(headC.volumeMounts.some((m: any) => m.name === 'shared-mem' && m.mountPath === '/dev/shm'));
    assert.ok(
      !worker.volumes.some((v: any) => v.name === 'shared-mem'),
      'workers: KubeRay sizes /dev/shm to the memory limit',
    );
  });

  it('hands Secrets to the pods by name and key only: no secret value in the object', () => {
    for (const c of [headC, workerC]) {
      assert.deepEqual(c.env, [
        { name: 'WANDB_MODE', value: 'offline' },
        { name: 'HF_HUB_OFFLINE', value: '1' },
        { name: 'WANDB_API_KEY', valueFrom: { secretKeyRef: { name: 'wandb', key: 'api-key' } } },
        // The Node's name, for the probe's link test (the node ledger records suspects under it).
        { name: 'RAGEN_ORCH_NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
        // Ray token auth, last so a user's entry of the same name cannot turn it off.
        { name: 'RAY_AUTH_MODE', value: 'token' },
        {
          name: 'RAY_AUTH_TOKEN',
          valueFrom: { secretKeyRef: { name: 'sokoban-test-abcd1234-a0-ray-auth', key: 'auth_token' } },
        },
      ]);
      assert.deepEqual(c.envFrom, [{ prefix: 'HF_', secretRef: { name: 'hf-credentials' } }]);
    }
    assert.doesNotMatch(JSON.stringify(rc), /"WANDB_API_KEY","value"/);
  });

  it('sets imagePullSecrets, priorityClassName, nodeSelector and tolerations per group', () => {
    for (const spec of [head, worker]) {
      assert.deepEqual(spec.imagePullSecrets, [{ name: 'regcred' }]);
      assert.equal(spec.priorityClassName, 'training-high');
    }
    assert.deepEqual(head.nodeSelector, { 'node-role.example/cpu': 'true' });
    assert.deepEqual(worker.nodeSelector, { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' });
    assert.equal(head.tolerations, undefined);
    assert.deepEqual(worker.tolerations, [
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  it("runs head and worker Pods as the spec's user, group and fsGroup; without one, as the image's user", () => {
    for (const spec of [head, worker])
      assert.deepEqual(spec.securityContext, { runAsUser: 1000, runAsGroup: 100, fsGroup: 100 });
    const bare = build('');
    assert.equal(bare.head.securityContext, undefined);
    assert.equal(bare.worker.securityContext, undefined);
  });

  it('keeps workers apart with required anti-affinity on the labels KubeRay puts on its pods', () => {
    assert.deepEqual(worker.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution, [
      {
        labelSelector: {
          matchLabels: { 'ray.io/cluster': 'sokoban-test-abcd1234-a0', 'ray.io/node-type': 'worker' },
        },
        topologyKey: 'kubernetes.io/hostname',
      },
    ]);
    assert.equal(head.affinity, undefined);
    assert.equal(build('').worker.affinity, undefined);
  });

  it('labels the RayCluster (not its pods) with the Kueue queue', () => {
    assert.equal(rc.metadata.labels?.['kueue.x-k8s.io/queue-name'], 'team-gpus');
    assert.equal(
      (rc.spec as any).headGroupSpec.template.metadata.labels['kueue.x-k8s.io/queue-name'],
      undefined,
    );
    assert.equal(
      (rc.spec as any).suspend,
      undefined,
      'Kueue suspends it itself; without Kueue it must start',
    );
  });

  it('overrides worker settings per group by name, field by field', () => {
    const { worker: w } = build(
      `workers:\n  memory: 16Gi\n  workingDir: /a\nworkerGroups:\n  gpu-workers:\n    workingDir: /b`,
    );
    assert.equal(w.containers[0].workingDir, '/b');
    assert.equal(w.containers[0].resources.requests.memory, '16Gi');
  });

  it('still mounts the storage PVC and runs the digest-pinned image', () => {
    assert.equal(headC.image, TEST_IMAGE);
    assert.deepEqual(worker.volumes[0], {
      name: 'ragen-storage',
      persistentVolumeClaim: { claimName: 'ragen-storage' },
    });
    assert.deepEqual(workerC.volumeMounts, [{ name: 'ragen-storage', mountPath: '/mnt/shared' }]);
  });
});

describe('kuberay pod template fields: bad input names the field and the fix', () => {
  const cases: [string, string, RegExp][] = [
    [
      'relative workingDir',
      'head:\n  workingDir: workspace/RAGEN',
      /kuberay\.head\.workingDir: must be an absolute path/,
    ],
    [
      'memory that is not a quantity',
      'workers:\n  memory: 16GB',
      /kuberay\.workers\.memory: a memory quantity such as 16Gi/,
    ],
    [
      'memoryLimit below memory',
      'head:\n  memory: 8Gi\n  memoryLimit: 4Gi',
      /kuberay\.head\.memoryLimit: memoryLimit 4Gi is below the request memory 8Gi; raise memoryLimit/,
    ],
    [
      'shmSize above the memory limit',
      'head:\n  memory: 1Gi\n  shmSize: 2Gi',
      /kuberay\.head\.shmSize: shmSize 2Gi is above the memory limit 1Gi/,
    ],
    [
      'cpuLimit below the CPUs requested',
      'workers:\n  cpuLimit: 0.5',
      /kuberay\.workers\.cpuLimit: cpuLimit 0\.5 is below the 1 CPUs requested by cluster\.workerGroups gpu-workers\.cpusPerWorker/,
    ],
    [
      'a credential as a literal value',
      'env:\n  WANDB_API_KEY: abc123',
      /kuberay\.env\.WANDB_API_KEY: WANDB_API_KEY looks like a credential.*write WANDB_API_KEY: \{secret: <name>, key: <key>\}/,
    ],
    ['a bad env name', 'env:\n  1BAD: x', /kuberay\.env\.1BAD: bad key: an environment variable name/],
    [
      'a bad Secret name in envFrom',
      'envFrom:\n  - secret: Bad_Secret',
      /kuberay\.envFrom\[0\]\.secret: a Kubernetes object name/,
    ],
    ['a bad Secret key', 'env:\n  HF_TOKEN: {secret: hf, key: "a/b"}', /kuberay\.env\.HF_TOKEN/],
    [
      'a bad pull secret name',
      'imagePullSecrets: [Reg_Cred]',
      /kuberay\.imagePullSecrets\[0\]: a Kubernetes object name/,
    ],
    [
      'a bad node label key',
      'head:\n  nodeSelector: {"bad key": x}',
      /kuberay\.head\.nodeSelector.*a node label key/,
    ],
    [
      'Exists with a value',
      'workers:\n  tolerations: [{key: a, operator: Exists, value: b}]',
      /kuberay\.workers\.tolerations\[0\]\.value: operator Exists takes no value/,
    ],
    [
      'tolerationSeconds without NoExecute',
      'workers:\n  tolerations: [{key: a, value: b, tolerationSeconds: 5}]',
      /tolerationSeconds applies only to effect NoExecute/,
    ],
    [
      'an unknown worker group',
      'workerGroups:\n  cpu-workers: {memory: 1Gi}',
      /kuberay\.workerGroups\.cpu-workers: no worker group named cpu-workers in cluster\.workerGroups \(gpu-workers\)/,
    ],
    [
      'a bad priority class',
      'priorityClassName: High_Priority',
      /kuberay\.priorityClassName: a Kubernetes object name/,
    ],
    ['a bad queue name', 'queueName: "team queue"', /kuberay\.queueName: a Kueue LocalQueue name/],
    ['an unknown field', 'head:\n  shm: true', /kuberay\.head\.shm: unknown field/],
  ];
  for (const [what, extra, expected] of cases) {
    it(`refuses ${what}`, () => assert.match(issues(withKuberay(extra)), expected));
  }

  it('accepts the full set', () => assert.equal(issues(withKuberay(FULL)), ''));
});

describe('join deadline default by backend', () => {
  const noJoin = (yaml: string) => yaml.replace('  joinSeconds: 60\n', '');
  it('is 900 s on kuberay (a multi-GB image pull on a fresh node), 180 s locally, and an explicit value wins', () => {
    assert.equal(parseExperimentSpec(noJoin(kuberaySpecYaml('/mnt/shared'))).deadlines.joinSeconds, 900);
    assert.equal(parseExperimentSpec(noJoin(validSpecYaml())).deadlines.joinSeconds, 180);
    assert.equal(parseExperimentSpec(kuberaySpecYaml('/mnt/shared')).deadlines.joinSeconds, 60);
  });
});

describe('Kubernetes quantities', () => {
  it('parses binary and decimal suffixes and exponents; refuses other text', () => {
    assert.equal(parseQuantity('2Gi'), 2 * 2 ** 30);
    assert.equal(parseQuantity('512Mi'), 512 * 2 ** 20);
    assert.equal(parseQuantity('1.5G'), 1.5e9);
    assert.equal(parseQuantity('500m'), 0.5);
    assert.equal(parseQuantity('2e3'), 2000);
    assert.equal(parseQuantity('1073741824'), 2 ** 30);
    for (const bad of ['16GB', 'Gi', '', '-1Gi', '1 Gi']) assert.equal(parseQuantity(bad), undefined, bad);
  });
});
