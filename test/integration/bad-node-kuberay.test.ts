import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.js';
import { KubeRayBackend } from '../../src/backends/kuberay/kuberay-backend.js';
import {
  LINK_SUSPECT_LABEL,
  LINK_SUSPECT_REASON_ANNOTATION,
  LINK_SUSPECT_UNTIL_ANNOTATION,
} from '../../src/backends/kuberay/node-labels.js';
import { NODE_LEDGER_CONFIGMAP } from '../../src/backends/kuberay/node-ledger-configmap.js';
import { AVOIDED_NODES_ANNOTATION } from '../../src/backends/kuberay/raycluster.js';
import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import { loadConfig } from '../../src/config/config.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { ManifestSchema } from '../../src/domain/run/manifest.js';
import { liveSuspects } from '../../src/domain/node-health/node-ledger.js';
import { activityDeps } from '../../src/worker/worker.js';
import type { experiment } from '../../src/workflows/experiment.js';
import { type KubeEnv, adminBackend, startKubeEnv } from '../helpers/kube-env.js';
import type { KubeletStandIn } from '../helpers/kubelet-standin/index.js';
import { kuberaySpecYaml } from '../helpers/kuberay-specs.js';
import { pushSokobanImage } from '../helpers/oci-images.js';
import { type RunningRegistry, startRegistry } from '../helpers/oci-registry.js';
import { rayProcesses } from '../helpers/processes.js';
import { testInput } from '../helpers/specs.js';
import { devServerEnv, uniqueId, workflowBundle } from '../helpers/temporal.js';

/**
 * A really degraded link on KubeRay: four stand-in nodes (one kubelet process plays each; every Pod
 * has its own veth), and every Pod on node 3 gets a token-bucket rate limit on its veth, both ways
 * (tc tbf: a slow NIC for real, not a test hook). The real operator, Ray, probe and payload run.
 * Run under `flock /tmp/ray-test.lock`.
 */
let kube: KubeEnv;
let env: TestWorkflowEnvironment;
let kubelet: KubeletStandIn;
let backend: KubeRayBackend;
let registry: RunningRegistry;
let image = '';
const run = promisify(execFile);
const SLOW_NODE = 'standin-gpu-node-3';
const HEAD_POOL = 'ragen.dev/head-pool';

before(async () => {
  assert.deepEqual(await rayProcesses(), [], 'no Ray process may be running before the test');
  kube = await startKubeEnv({ gpus: 1, extraNodes: 3, namespace: 'ragen-bad-node' });
  kubelet = kube.kubelet!;
  kubelet.slowNodes.set(SLOW_NODE, '40mbit');
  // The head may go anywhere but the slow node, so every worker node is one of the four.
  const core = kube.admin.makeApiClient(CoreV1Api);
  for (const name of kube.nodeNames.filter((n) => n !== SLOW_NODE)) {
    const node = await core.readNode({ name });
    node.metadata!.labels = { ...node.metadata!.labels, [HEAD_POOL]: 'true' };
    await core.replaceNode({ name, body: node });
  }
  env = await devServerEnv();
  registry = await startRegistry();
  image = await pushSokobanImage(registry);
  // Node labels on (RAGEN_LABEL_SUSPECT_NODES=1): the admin identity may patch Nodes.
  backend = new KubeRayBackend({ ...adminBackend(kube).config, labelSuspectNodes: true });
});
after(async () => {
  backend?.close();
  await env?.teardown();
  await registry?.stop();
  await kube?.stop();
});

/** Three one-GPU workers (two cannot pin a slow link on either end); the head off the slow node. */
function threeWorkerSpec(): ExperimentSpec {
  const yaml = `${kuberaySpecYaml(kube.storageDir, kube.pvc)
    .replace('replicas: 2', 'replicas: 3')
    .replace('nnodes: 2', 'nnodes: 3')}  head:\n    nodeSelector: {${HEAD_POOL}: "true"}\n`;
  const parsed = parseExperimentSpec(yaml);
  return {
    ...parsed,
    image,
    deadlines: { ...parsed.deadlines, joinSeconds: 600 },
    trainer: { ...parsed.trainer, entrypoint: ['python', '-m', 'ragen_toy.train'] },
  };
}

async function kuberayWorker() {
  const config = { ...loadConfig(), RAGEN_POLL_INTERVAL_MS: 1000 };
  const taskQueue = uniqueId('bad-node');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: createActivities({ ...activityDeps(config, env.client), backends: { kuberay: backend } }),
  });
  return { worker, taskQueue };
}

/** Whether one of the Pod's processes is an all-reduce rank actor (Ray titles it `ray::AllReduceRank...`). */
async function runsAllReduceRank(pod: V1Pod): Promise<boolean> {
  for (const pid of await kubelet.podProcesses(pod.metadata?.name ?? '')) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('AllReduceRank')) return true;
  }
  return false;
}

describe('a node with a slow link, on KubeRay (stand-in nodes, real tc rate limit)', () => {
  it('names the slow node, records it in the ConfigMap, keeps the next cluster off it, trains, and `nodes --backend kuberay` clears it', async () => {
    const spec = threeWorkerSpec();
    const { worker, taskQueue } = await kuberayWorker();
    // The RayClusters' annotations while they exist (both are deleted by the end).
    const annotations = new Map<string, Record<string, string>>();
    let watching = true;
    const custom = kube.admin.makeApiClient(CustomObjectsApi);
    const watch = (async () => {
      while (watching) {
        const list = (await custom
          .listNamespacedCustomObject({
            group: 'ray.io',
            version: 'v1',
            namespace: kube.namespace,
            plural: 'rayclusters',
          })
          .catch(() => ({ items: [] }))) as {
          items: { metadata: { name: string; annotations?: Record<string, string> } }[];
        };
        for (const rc of list.items) annotations.set(rc.metadata.name, rc.metadata.annotations ?? {});
        await sleep(500);
      }
    })();
    const started = Date.now();
    const result = await worker.runUntil(
      env.client.workflow.execute<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('bad-node-wf'),
        args: [testInput(spec)],
      }),
    );
    watching = false;
    await watch;
    const errors = result.stages.filter((s) => s.error).map((s) => `${s.stage}#${s.attempt}: ${s.error}`);
    assert.equal(result.outcome, 'succeeded', errors.join('\n'));
    const joinFailure = result.stages.find((s) => s.stage === 'join' && s.error)?.error ?? '';
    assert.match(joinFailure, new RegExp(`slow node\\(s\\): node ${SLOW_NODE} \\(`), errors.join('\n'));
    assert.doesNotMatch(joinFailure, /node standin-gpu-node(-2|-4)? \(/);
    assert.match(
      joinFailure,
      new RegExp(
        `${SLOW_NODE} recorded as link suspects in ConfigMap ragen-bad-node/${NODE_LEDGER_CONFIGMAP}`,
      ),
    );
    console.log(
      `# slow node named, avoided and trained in ${((Date.now() - started) / 1000).toFixed(1)} s: ${joinFailure.slice(0, 400)}`,
    );

    // The ledger holds it; the second cluster was kept off it, for real (its Pods ran elsewhere).
    assert.deepEqual(
      liveSuspects(await backend.nodeLedger().read(), new Date()).map((s) => s.node),
      [SLOW_NODE],
    );
    const pods = (cluster: string) =>
      kubelet.started.filter((p: V1Pod) => p.metadata?.labels?.['ray.io/cluster'] === cluster);
    const clusters = [...new Set(kubelet.started.map((p) => p.metadata?.labels?.['ray.io/cluster'] ?? ''))];
    assert.equal(clusters.length, 2, clusters.join(', '));
    const nodesOf = (c: string) => pods(c).map((p) => p.spec?.nodeName);
    assert.ok(nodesOf(clusters[0]!).includes(SLOW_NODE), `${nodesOf(clusters[0]!)}`);
    assert.ok(!nodesOf(clusters[1]!).includes(SLOW_NODE), `${nodesOf(clusters[1]!)}`);
    const second = pods(clusters[1]!)[0]!;
    assert.deepEqual(
      second.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms,
      [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: [SLOW_NODE] }] }],
    );
    const manifest = ManifestSchema.parse(
      JSON.parse(await readFile(result.archive.manifestPath ?? '', 'utf8')),
    );
    const links = (manifest.preflight.allReduce as { links?: { nodes: { node_name: string }[] } }).links;
    assert.ok(links && !links.nodes.some((n) => n.node_name === SLOW_NODE), JSON.stringify(links));
    assert.equal(result.training.finalStep, 20);
    assert.equal(result.teardown.outcome, 'succeeded');
    // The second RayCluster named what it avoided; the first avoided nothing.
    assert.equal(annotations.get(clusters[0]!)?.[AVOIDED_NODES_ANNOTATION], undefined);
    assert.equal(annotations.get(clusters[1]!)?.[AVOIDED_NODES_ANNOTATION], SLOW_NODE);
    // The platform's copy: the suspect's Node is labelled (reason and expiry annotated), no other.
    const core = kube.admin.makeApiClient(CoreV1Api);
    const labelled = await core.listNode({ labelSelector: LINK_SUSPECT_LABEL });
    assert.deepEqual(
      labelled.items.map((n) => n.metadata?.name),
      [SLOW_NODE],
    );
    const [ledgerEntry] = liveSuspects(await backend.nodeLedger().read(), new Date());
    assert.equal(
      labelled.items[0]!.metadata?.annotations?.[LINK_SUSPECT_UNTIL_ANNOTATION],
      ledgerEntry!.expires,
    );
    assert.match(
      labelled.items[0]!.metadata?.annotations?.[LINK_SUSPECT_REASON_ANNOTATION] ?? '',
      /^best link /,
    );

    const cli = (...args: string[]) =>
      run('npx', ['tsx', 'src/cli/main.ts', 'nodes', ...args, '--backend', 'kuberay'], {
        env: {
          ...process.env,
          RAGEN_KUBECONFIG: kube.adminKubeconfig,
          RAGEN_KUBERAY_NAMESPACE: kube.namespace,
          RAGEN_LABEL_SUSPECT_NODES: '1',
        },
      });
    assert.match((await cli()).stdout, new RegExp(`^${SLOW_NODE} +\\S+ +1 +best link`, 'm'));
    assert.match((await cli('clear', '--all')).stdout, new RegExp(`cleared from .*: ${SLOW_NODE}`));
    assert.match((await cli()).stdout, /no link suspects/);
    // Cleared from the ledger, unlabelled on the Node.
    assert.deepEqual((await core.listNode({ labelSelector: LINK_SUSPECT_LABEL })).items, []);
    assert.equal(
      (await core.readNode({ name: SLOW_NODE })).metadata?.annotations?.[LINK_SUSPECT_UNTIL_ANNOTATION],
      undefined,
    );
  });

  it("names a node whose link is cut mid-check (its Pod's veth down), keeps the next cluster off it, and trains", async () => {
    // Node 3's link is slow first (20 Mbit/s: its part of the link test takes tens of seconds),
    // then cut 10 s after its all-reduce rank is up: the cut lands inside the check, under load too.
    // Only the cut makes it unresponsive: a slow node would be named with a bandwidth instead.
    kubelet.slowNodes.clear();
    kubelet.slowNodes.set(SLOW_NODE, '20mbit');
    const spec = { ...threeWorkerSpec(), checks: { ...threeWorkerSpec().checks, allReduceSeconds: 60 } };
    const { worker, taskQueue } = await kuberayWorker();
    const mark = kubelet.started.length;
    const onSlowNode = (p: V1Pod) =>
      p.metadata?.labels?.['ray.io/node-type'] === 'worker' && p.spec?.nodeName === SLOW_NODE;
    let cut: V1Pod | undefined;
    let done = false;
    const cutter = (async () => {
      while (!cut && !done) {
        const pod = kubelet.started.slice(mark).find(onSlowNode);
        if (pod && (await runsAllReduceRank(pod))) {
          await sleep(10_000);
          await kubelet.cutLink(pod.metadata?.name ?? '');
          cut = pod;
        }
        await sleep(200);
      }
    })();
    const result = await worker.runUntil(async () => {
      const r = await env.client.workflow.execute<typeof experiment>('experiment', {
        taskQueue,
        workflowId: uniqueId('cut-link-wf'),
        args: [testInput(spec)],
      });
      done = true;
      await cutter;
      return r;
    });
    const errors = result.stages.filter((s) => s.error).map((s) => `${s.stage}#${s.attempt}: ${s.error}`);
    assert.ok(cut, `no worker Pod on ${SLOW_NODE} ran an all-reduce rank: ${errors.join('\n')}`);
    const cutNode = SLOW_NODE;
    assert.equal(result.outcome, 'succeeded', errors.join('\n'));
    const joinFailure = result.stages.find((s) => s.stage === 'join' && s.error)?.error ?? '';
    assert.match(
      joinFailure,
      new RegExp(`node ${cutNode} \\([^)]*\\): did not answer \\(its link-test actor`),
      errors.join('\n'),
    );
    console.log(`# cut link named: ${joinFailure.slice(0, 300)}`);
    const clusters = [
      ...new Set(kubelet.started.slice(mark).map((p) => p.metadata?.labels?.['ray.io/cluster'] ?? '')),
    ];
    assert.equal(clusters.length, 2, clusters.join(', '));
    const second = kubelet.started
      .slice(mark)
      .filter((p) => p.metadata?.labels?.['ray.io/cluster'] === clusters[1]);
    assert.ok(
      !second.some((p) => p.spec?.nodeName === cutNode),
      second.map((p) => p.spec?.nodeName).join(', '),
    );
    assert.equal(result.training.finalStep, 20);
    assert.deepEqual(
      liveSuspects(await backend.nodeLedger().read(), new Date()).map((s) => s.node),
      [cutNode],
    );
    await backend.nodeLedger().update(() => ({ suspects: [] }));
    kubelet.slowNodes.clear();
  });
});
