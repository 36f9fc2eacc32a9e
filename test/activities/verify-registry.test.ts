import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { createActivities } from '../../src/activities/index.js';
import { RegistryClient } from '../../src/registry/client.js';
import { REGISTRY_UNAVAILABLE } from '../../src/registry/errors.js';
import { RAY_VERSION_LABEL } from '../../src/registry/ray-version.js';
import { fakeBackend, readyCluster } from '../helpers/fake-ray-head.js';
import { pushImage, pushIndex } from '../helpers/oci-images.js';
import { freePorts } from '../../src/backends/local/ports.js';
import { type RunningRegistry, startRegistry } from '../helpers/oci-registry.js';
import {
  type StandInServer,
  startDigestRewritingProxyStandIn,
  startUnavailableRegistryStandIn,
} from '../helpers/registry-standins.js';
import { testSpec } from '../helpers/specs.js';
import { type TokenEndpointStandIn, startTokenEndpoint } from '../helpers/token-endpoint-standin.js';

const USER = { username: 'ragen', password: 's3cret-never-printed' };
const labelled = { labels: { [RAY_VERSION_LABEL]: '2.60.0' } };
let open: RunningRegistry;
let basic: RunningRegistry;
let bearer: RunningRegistry;
let tokens: TokenEndpointStandIn;
let configDir: string;
const digests: Record<string, string> = {};
let indexPlatforms: Record<string, string> = {};
const standIns: StandInServer[] = [];

/** Writes a Docker config with the given auths and returns its path. */
async function dockerConfig(
  name: string,
  auths: Record<string, { username: string; password: string }>,
): Promise<string> {
  const path = join(configDir, `${name}.json`);
  const entries = Object.fromEntries(
    Object.entries(auths).map(([host, c]) => [
      host,
      { auth: Buffer.from(`${c.username}:${c.password}`).toString('base64') },
    ]),
  );
  await writeFile(path, JSON.stringify({ auths: entries }));
  return path;
}

/** The verify activity as the worker serves it: through the failure boundary (ApplicationFailures out). */
function verifyWith(dockerConfigPath: string) {
  return createActivities({
    backends: { local: fakeBackend(() => readyCluster(2, 2)) },
    rayHead: () => assert.fail('verify never talks to a Ray head'),
    reportProgress: async () => undefined,
    workflowStatus: async () => undefined,
    imageRegistry: new RegistryClient({ dockerConfigPath, timeoutMs: 5_000 }),
    pollIntervalMs: 20,
  }).verify;
}

const spec = (image: string, rayVersion = '2.60.0') => testSpec({ image, rayVersion });

async function failure(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => assert.fail('verify succeeded'),
    (err: Error) => err,
  );
}

function assertPermanent(err: Error, type: string, message: RegExp): void {
  assert.ok(err instanceof ApplicationFailure, `${err.name}: ${err.message}`);
  assert.equal(err.type, type, err.message);
  assert.ok(err.nonRetryable);
  assert.match(err.message, message);
  assert.doesNotMatch(err.message, new RegExp(USER.password));
}

function assertRetryable(err: Error): void {
  assert.ok(err instanceof ApplicationFailure, err.message);
  assert.equal(err.type, REGISTRY_UNAVAILABLE);
  assert.ok(!err.nonRetryable, 'retried by the activity policy');
}

before(async () => {
  configDir = await mkdtemp(join(tmpdir(), 'docker-config-'));
  open = await startRegistry();
  basic = await startRegistry({ kind: 'htpasswd', ...USER });
  tokens = await startTokenEndpoint(USER);
  bearer = await startRegistry({
    kind: 'token',
    realm: tokens.realm,
    service: tokens.service,
    issuer: tokens.issuer,
    rootCertBundle: tokens.certPath,
  });
  const to = (repository: string) => ({ baseUrl: open.baseUrl, repository });
  digests['labelled'] = await pushImage(to('ragen'), labelled, '2.60.0');
  digests['unlabelled'] = await pushImage(to('ragen-plain'), { docker: true });
  digests['env'] = await pushImage(to('ragen-env'), { env: ['PATH=/bin', 'RAY_VERSION=2.60.0'] });
  digests['old'] = await pushImage(to('ragen'), { labels: { [RAY_VERSION_LABEL]: '2.9.3' } });
  const index = await pushIndex(to('ragen-multi'), {
    arm64: { labels: { [RAY_VERSION_LABEL]: '0.0.0-arm64' } },
    amd64: labelled,
  });
  digests['index'] = index.digest;
  indexPlatforms = index.platforms;
  digests['armOnly'] = (await pushIndex(to('ragen-arm'), { arm64: labelled })).digest;
  const basicAuth = `Basic ${Buffer.from(`${USER.username}:${USER.password}`).toString('base64')}`;
  digests['basic'] = await pushImage(
    { baseUrl: basic.baseUrl, repository: 'ragen', authorization: basicAuth },
    labelled,
  );
  const pushToken = `Bearer ${tokens.mint('repository:team/ragen:pull,push')}`;
  digests['bearer'] = await pushImage(
    { baseUrl: bearer.baseUrl, repository: 'team/ragen', authorization: pushToken },
    labelled,
  );
});
after(async () => {
  for (const s of standIns) await s.stop();
  await Promise.all([open?.stop(), basic?.stop(), bearer?.stop(), tokens?.stop()]);
});

describe('verify against a real Distribution registry on loopback', () => {
  it('reads the Ray version from the io.ray.version label of a single-platform OCI image', async () => {
    const r = await verifyWith(join(configDir, 'absent.json'))({
      spec: spec(`${open.host}/ragen:2.60.0@${digests['labelled']}`),
    });
    assert.equal(r.image.verified, true);
    assert.equal(r.image.rayVersion, '2.60.0');
    assert.equal(r.image.rayVersionSource, 'label');
    assert.equal(r.image.platformManifestDigest, digests['labelled']);
  });

  it('falls back to RAY_VERSION in the config Env', async () => {
    const r = await verifyWith(join(configDir, 'absent.json'))({
      spec: spec(`${open.host}/ragen-env@${digests['env']}`),
    });
    assert.equal(r.image.rayVersionSource, 'env');
    assert.equal(r.image.rayVersion, '2.60.0');
  });

  it('says so when a Docker schema 2 image states no Ray version, leaving the check to the head after join', async () => {
    const r = await verifyWith(join(configDir, 'absent.json'))({
      spec: spec(`${open.host}/ragen-plain@${digests['unlabelled']}`),
    });
    assert.equal(r.image.verified, true);
    assert.equal(r.image.rayVersionSource, 'none');
    assert.equal(r.image.rayVersion, undefined);
    assert.match(r.image.note, /states no Ray version.*observed on the head after join/);
  });

  it('resolves a two-platform index to its linux/amd64 manifest', async () => {
    const r = await verifyWith(join(configDir, 'absent.json'))({
      spec: spec(`${open.host}/ragen-multi@${digests['index']}`),
    });
    assert.equal(r.image.digest, digests['index']);
    assert.equal(r.image.platformManifestDigest, indexPlatforms['amd64']);
    assert.notEqual(indexPlatforms['amd64'], indexPlatforms['arm64']);
    assert.equal(r.image.rayVersion, '2.60.0', 'the arm64 entry (0.0.0-arm64) was not chosen');
  });

  it('refuses an index without linux/amd64, naming the platforms it has', async () => {
    const err = await failure(
      verifyWith(join(configDir, 'absent.json'))({
        spec: spec(`${open.host}/ragen-arm@${digests['armOnly']}`),
      }),
    );
    assertPermanent(err, 'ImageNotVerified', /without a linux\/amd64 manifest \(platforms: linux\/arm64\)/);
  });

  it('fails permanently on a Ray version mismatch, naming both versions and the fix', async () => {
    const err = await failure(
      verifyWith(join(configDir, 'absent.json'))({ spec: spec(`${open.host}/ragen@${digests['old']}`) }),
    );
    assertPermanent(
      err,
      'RayVersionMismatch',
      /contains Ray 2\.9\.3 \(label io\.ray\.version\), the spec declares rayVersion 2\.60\.0; set rayVersion: 2\.9\.3, or use an image built with Ray 2\.60\.0/,
    );
  });

  it('fails permanently on an unknown digest, naming the repository', async () => {
    const unknown = `sha256:${'0'.repeat(64)}`;
    const err = await failure(
      verifyWith(join(configDir, 'absent.json'))({ spec: spec(`${open.host}/ragen@${unknown}`) }),
    );
    assertPermanent(
      err,
      'ImageNotFound',
      new RegExp(`image not found: repository ${open.host}/ragen has no manifest ${unknown}`),
    );
  });

  it('Basic auth (htpasswd): credentials from the Docker config auths are used', async () => {
    const config = await dockerConfig('basic-ok', { [`http://${basic.host}`]: USER });
    const r = await verifyWith(config)({ spec: spec(`${basic.host}/ragen@${digests['basic']}`) });
    assert.equal(r.image.verified, true);
  });

  it('Basic auth: anonymous only and wrong credentials are unauthorised, naming what was tried but never the secret', async () => {
    const image = `${basic.host}/ragen@${digests['basic']}`;
    const none = await failure(verifyWith(join(configDir, 'absent.json'))({ spec: spec(image) }));
    assertPermanent(
      none,
      'RegistryUnauthorized',
      /credentials tried: anonymous \(no entry for 127\.0\.0\.1:\d+ in .*absent\.json\)/,
    );
    const config = await dockerConfig('basic-wrong', {
      [basic.host]: { username: USER.username, password: 'wrong-password' },
    });
    const wrong = await failure(verifyWith(config)({ spec: spec(image) }));
    assertPermanent(
      wrong,
      'RegistryUnauthorized',
      /HTTP 401.*credentials tried: anonymous, then basic auth from .*basic-wrong\.json for 127\.0\.0\.1:\d+/,
    );
    assert.doesNotMatch(wrong.message, /wrong-password/);
  });

  it('Bearer auth: the WWW-Authenticate challenge leads to the (stand-in) token endpoint with the pull scope', async () => {
    const config = await dockerConfig('bearer-ok', { [bearer.host]: USER });
    const before = tokens.requests.length;
    const r = await verifyWith(config)({ spec: spec(`${bearer.host}/team/ragen@${digests['bearer']}`) });
    assert.equal(r.image.rayVersion, '2.60.0');
    const seen = tokens.requests.slice(before);
    assert.deepEqual(
      seen,
      [{ basic: true, scope: 'repository:team/ragen:pull' }],
      'one token serves the manifest and the config blob',
    );
  });

  it('Bearer auth without credentials is unauthorised, naming the token endpoint tried', async () => {
    const err = await failure(
      verifyWith(join(configDir, 'absent.json'))({
        spec: spec(`${bearer.host}/team/ragen@${digests['bearer']}`),
      }),
    );
    assertPermanent(
      err,
      'RegistryUnauthorized',
      /credentials tried: anonymous, then bearer token from http:\/\/127\.0\.0\.1:\d+\/token \(anonymous\)/,
    );
  });

  it('a manifest whose Docker-Content-Digest differs from the requested digest is refused (stand-in rewriting proxy)', async () => {
    const proxy = await startDigestRewritingProxyStandIn(open.baseUrl, `sha256:${'f'.repeat(64)}`);
    standIns.push(proxy);
    const err = await failure(
      verifyWith(join(configDir, 'absent.json'))({
        spec: spec(`${proxy.host}/ragen@${digests['labelled']}`),
      }),
    );
    assertPermanent(
      err,
      'ImageDigestMismatch',
      new RegExp(`Docker-Content-Digest sha256:f{64}, content sha256 ${digests['labelled']}`),
    );
  });

  it('a 5xx registry and an unreachable one give a retryable RegistryUnavailable', async () => {
    const broken = await startUnavailableRegistryStandIn();
    standIns.push(broken);
    const verify = verifyWith(join(configDir, 'absent.json'));
    const err5xx = await failure(verify({ spec: spec(`${broken.host}/ragen@${digests['labelled']}`) }));
    assertRetryable(err5xx);
    assert.match(err5xx.message, /answered HTTP 503/);
    const closed = `127.0.0.1:${(await freePorts(1))[0]}`;
    const errDown = await failure(verify({ spec: spec(`${closed}/ragen@${digests['labelled']}`) }));
    assertRetryable(errDown);
    assert.match(errDown.message, new RegExp(`registry ${closed} unreachable.*ECONNREFUSED`));
  });
});
