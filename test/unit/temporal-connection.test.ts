import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TemporalSettingsError, temporalConnectionSettings } from '../../src/temporal/temporal-connection.js';

describe('Temporal connection settings (the temporal CLI’s profile file and TEMPORAL_* variables)', () => {
  it('defaults to the local dev server', () => {
    const s = temporalConnectionSettings({ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' });
    assert.equal(s.address, '127.0.0.1:7233');
    assert.equal(s.namespace, 'default');
    assert.equal(s.connectionOptions.tls, undefined);
  });

  it('reads a profile (address, namespace, API key: TLS on) and lets the environment override it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'envconfig-'));
    const file = join(dir, 'temporal.toml');
    await writeFile(
      file,
      '[profile.cloud]\naddress = "eu.aws.api.temporal.io:7233"\nnamespace = "ragen.acct"\napi_key = "secret"\n',
    );
    const cloud = temporalConnectionSettings({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' });
    assert.equal(cloud.address, 'eu.aws.api.temporal.io:7233');
    assert.equal(cloud.namespace, 'ragen.acct');
    assert.equal(cloud.connectionOptions.apiKey, 'secret');
    assert.equal(cloud.connectionOptions.tls, true);
    assert.equal(cloud.profile, 'cloud');
    const overridden = temporalConnectionSettings({
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'cloud',
      TEMPORAL_ADDRESS: '127.0.0.1:7999',
      TEMPORAL_NAMESPACE: 'other',
    });
    assert.equal(overridden.address, '127.0.0.1:7999');
    assert.equal(overridden.namespace, 'other');
    assert.throws(
      () => temporalConnectionSettings({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' }),
      (err: Error) => err instanceof TemporalSettingsError && /Profile 'nope' not found/.test(err.message),
    );
  });
});
