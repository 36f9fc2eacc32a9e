import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { SERVICE_ACCOUNT_DIR, inCluster, loadKubeConfig } from '../../src/backends/kuberay/kube-config.js';

/** In-cluster loading against a service account directory laid out as the kubelet mounts it. */
const saved = { ...process.env };
let root = '';

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ragen-sa-'));
  await mkdir(join(root, SERVICE_ACCOUNT_DIR), { recursive: true });
  await writeFile(join(root, SERVICE_ACCOUNT_DIR, 'token'), 'token-1');
  await writeFile(join(root, SERVICE_ACCOUNT_DIR, 'ca.crt'), 'not a real CA');
  await writeFile(join(root, SERVICE_ACCOUNT_DIR, 'namespace'), 'training');
  delete process.env['KUBECONFIG'];
  process.env['KUBERNETES_SERVICE_HOST'] = '10.0.0.1';
  process.env['KUBERNETES_SERVICE_PORT'] = '443';
});
afterEach(async () => {
  for (const k of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  await rm(root, { recursive: true, force: true });
});

describe('loadKubeConfig in a Pod', () => {
  it('uses the mounted service account: server from KUBERNETES_SERVICE_HOST/PORT, its CA, its token file, its namespace', async () => {
    const kc = loadKubeConfig(undefined, root);
    assert.equal(kc.getCurrentCluster()?.server, 'https://10.0.0.1:443');
    assert.equal(kc.getCurrentCluster()?.caFile, join(root, SERVICE_ACCOUNT_DIR, 'ca.crt'));
    assert.equal(kc.getContextObject(kc.getCurrentContext())?.namespace, 'training');
    const first: { headers?: Record<string, string> } = {};
    await kc.applyToHTTPSOptions(first);
    assert.equal(first.headers?.['Authorization'], 'Bearer token-1');
  });

  it('an explicit kubeconfig wins over the service account; KUBECONFIG too', async () => {
    const file = join(root, 'kubeconfig');
    await writeFile(
      file,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://elsewhere:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    );
    assert.equal(loadKubeConfig(file, root).getCurrentCluster()?.server, 'https://elsewhere:6443');
    process.env['KUBECONFIG'] = file;
    assert.equal(loadKubeConfig(undefined, root).getCurrentCluster()?.server, 'https://elsewhere:6443');
  });

  it('not in a Pod: without KUBERNETES_SERVICE_HOST, or without the token file', async () => {
    assert.equal(inCluster(process.env, root), true);
    assert.equal(inCluster({}, root), false);
    await rm(join(root, SERVICE_ACCOUNT_DIR, 'token'));
    assert.equal(inCluster(process.env, root), false);
  });
});
