import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { basicCredentialsFor, dockerConfigPath, parseChallenge } from '../../src/registry/auth.js';
import { imageRayVersion } from '../../src/registry/ray-version.js';
import { locateImage } from '../../src/registry/reference.js';
import { ImageRefSchema, parseImageRef } from '../../src/domain/spec/image.js';

const D = `sha256:${'a'.repeat(64)}`;
const where = (image: string) => {
  const l = locateImage(parseImageRef(image));
  return [l.baseUrl, l.repository, l.tag];
};

describe('image reference rules', () => {
  it('puts names without a registry component on Docker Hub, one-component names under library/', () => {
    assert.deepEqual(where(`ubuntu@${D}`), ['https://registry-1.docker.io', 'library/ubuntu', undefined]);
    assert.deepEqual(where(`rayproject/ray:2.60.0@${D}`), [
      'https://registry-1.docker.io',
      'rayproject/ray',
      '2.60.0',
    ]);
    assert.deepEqual(where(`docker.io/rayproject/ray@${D}`), [
      'https://registry-1.docker.io',
      'rayproject/ray',
      undefined,
    ]);
    assert.deepEqual(where(`docker.io/ubuntu:22.04@${D}`), [
      'https://registry-1.docker.io',
      'library/ubuntu',
      '22.04',
    ]);
  });

  it('a first component with a dot, a port or localhost is the registry; loopback uses http', () => {
    assert.deepEqual(where(`ghcr.io/org/ragen@${D}`), ['https://ghcr.io', 'org/ragen', undefined]);
    assert.deepEqual(where(`registry.example.com:8443/a/b:v1@${D}`), [
      'https://registry.example.com:8443',
      'a/b',
      'v1',
    ]);
    assert.deepEqual(where(`localhost/ragen@${D}`), ['http://localhost', 'ragen', undefined]);
    assert.deepEqual(where(`127.0.0.1:5000/team/ragen:2.60.0@${D}`), [
      'http://127.0.0.1:5000',
      'team/ragen',
      '2.60.0',
    ]);
  });
});

describe('malformed digests are refused by the spec', () => {
  it('names the digest rule for a short, upper-case or non-sha256 digest', () => {
    for (const bad of [
      '127.0.0.1:5000/ragen@sha256:abc',
      `ragen@sha256:${'A'.repeat(64)}`,
      `ragen@md5:${'a'.repeat(32)}`,
    ]) {
      const r = ImageRefSchema.safeParse(bad);
      assert.equal(r.success, false, bad);
      assert.match(
        r.error?.issues[0]?.message ?? '',
        /not pinned by an immutable digest; the digest must be sha256: followed by 64 lowercase hex characters/,
      );
    }
  });
});

describe('registry auth pieces', () => {
  it('parses a Bearer challenge with quoted values containing commas and colons', () => {
    const c = parseChallenge(
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/ubuntu:pull,push"',
    );
    assert.deepEqual(c, {
      scheme: 'bearer',
      params: {
        realm: 'https://auth.docker.io/token',
        service: 'registry.docker.io',
        scope: 'repository:library/ubuntu:pull,push',
      },
    });
    assert.deepEqual(parseChallenge('Basic realm="test"'), { scheme: 'basic', params: { realm: 'test' } });
    assert.equal(parseChallenge(null), undefined);
  });

  it('finds Basic credentials in the Docker config auths by host, whatever the key spelling', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dc-'));
    const path = join(dir, 'config.json');
    await writeFile(
      path,
      JSON.stringify({
        auths: {
          'https://index.docker.io/v1/': { auth: Buffer.from('hub:pw1').toString('base64') },
          'http://127.0.0.1:5000': { auth: Buffer.from('local:p:w:2').toString('base64') },
          'ghcr.io': { username: 'gh', password: 'pw3' },
        },
      }),
    );
    assert.equal((await basicCredentialsFor('docker.io', path))?.username, 'hub');
    assert.deepEqual(
      await basicCredentialsFor('127.0.0.1:5000', path).then((c) => [c?.username, c?.password]),
      ['local', 'p:w:2'],
    );
    assert.match(
      (await basicCredentialsFor('ghcr.io', path))?.source ?? '',
      /basic auth from .*config\.json for ghcr\.io/,
    );
    assert.equal(await basicCredentialsFor('quay.io', path), undefined);
    assert.equal(await basicCredentialsFor('quay.io', join(dir, 'missing.json')), undefined);
    assert.equal(dockerConfigPath({ DOCKER_CONFIG: '/etc/dc' }), '/etc/dc/config.json');
  });
});

describe('the Ray version an image states', () => {
  it('label first, then RAY_VERSION in Env, else none', () => {
    assert.deepEqual(
      imageRayVersion({ labels: { 'io.ray.version': '2.60.0' }, env: ['RAY_VERSION=2.9.3'] }),
      { version: '2.60.0', source: 'label' },
    );
    assert.deepEqual(imageRayVersion({ labels: {}, env: ['PATH=/bin', 'RAY_VERSION=2.9.3'] }), {
      version: '2.9.3',
      source: 'env',
    });
    assert.deepEqual(imageRayVersion({ labels: {}, env: ['RAY_VERSION_X=1'] }), { source: 'none' });
  });
});
