/**
 * The deployment files use what the tests run: the Temporal server version and PostgreSQL major of
 * scripts/temporal/versions.sh, the config file the tests start the server with, and its keys.
 * Data-driven: PINNED says which image references must carry which tag, in docker-compose.yml and
 * every YAML file under deploy/ (the Kubernetes manifests too, once they exist).
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { REPO_ROOT } from '../../src/config/config.js';
import { searchAttributeDefinitions } from '../../src/workflows/search-attributes.js';
import { TEMPORAL_VERSIONS_FILE, temporalServerVersions } from '../helpers/temporal-versions.js';

const versions = temporalServerVersions();
const serverTag = versions.server.replace(/^v/, '');

/** Image repositories and the tag each must have; `major` compares only the tag's first number. */
const PINNED: { image: string; tag: string; match: 'exact' | 'major' }[] = [
  { image: 'temporalio/server', tag: serverTag, match: 'exact' },
  { image: 'temporalio/admin-tools', tag: serverTag, match: 'exact' },
  { image: 'temporalio/auto-setup', tag: serverTag, match: 'exact' },
  { image: 'postgres', tag: versions.postgresMajor, match: 'major' },
];

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}
const CHECKED_FILES = [join(REPO_ROOT, 'docker-compose.yml'), ...yamlFilesUnder(join(REPO_ROOT, 'deploy'))];

/** `image: repo:tag` references in a file (YAML or not: manifests, compose, Helm values). */
function imageRefs(text: string): { image: string; tag: string }[] {
  return [...text.matchAll(/image:\s*["']?(?:docker\.io\/)?(?:library\/)?([\w./-]+):([\w.-]+)/g)].map(
    (m) => ({
      image: m[1] ?? '',
      tag: m[2] ?? '',
    }),
  );
}

const compose = parse(readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<
    string,
    { image?: string; environment?: Record<string, unknown>; entrypoint?: string[]; volumes?: string[] }
  >;
};
const service = (name: string) =>
  compose.services[name] ?? assert.fail(`docker-compose.yml: no service ${name}`);
const CONFIG_FILE = join(REPO_ROOT, 'deploy/temporal/config/production-postgres12.yaml');
const configTemplate = readFileSync(CONFIG_FILE, 'utf8');

describe('deployment files agree with the tested topology (scripts/temporal/versions.sh)', () => {
  it('every pinned image reference carries the tested version', () => {
    let seen = 0;
    for (const file of CHECKED_FILES) {
      for (const ref of imageRefs(readFileSync(file, 'utf8'))) {
        const pin = PINNED.find((p) => p.image === ref.image);
        if (!pin) continue;
        seen++;
        const actual = pin.match === 'major' ? ref.tag.split('.')[0] : ref.tag;
        assert.equal(
          actual,
          pin.tag,
          `${relative(REPO_ROOT, file)}: ${ref.image}:${ref.tag}, but the tests run ${pin.image} ${pin.tag} (${relative(REPO_ROOT, TEMPORAL_VERSIONS_FILE)}); change one to match the other`,
        );
      }
    }
    assert.ok(seen >= 3, 'docker-compose.yml names the server, the schema tool and PostgreSQL images');
  });

  it('compose starts the server with the config the tests use, and sets only keys that config reads', () => {
    const temporal = service('temporal');
    assert.match(
      (temporal.entrypoint ?? []).join(' '),
      /--config config --env production-postgres12/,
      'docker-compose.yml: the temporal service must start with deploy/temporal/config/production-postgres12.yaml',
    );
    assert.ok(temporal.volumes?.some((v) => v.startsWith('./deploy/temporal:')));
    const read = new Set([...configTemplate.matchAll(/env "([A-Z0-9_]+)"/g)].map((m) => m[1]));
    const required = [...configTemplate.matchAll(/\{\{ env "([A-Z0-9_]+)"/g)].map((m) => m[1]);
    const set = Object.keys(temporal.environment ?? {});
    for (const key of set)
      assert.ok(
        read.has(key),
        `docker-compose.yml sets ${key}, which ${relative(REPO_ROOT, CONFIG_FILE)} never reads`,
      );
    for (const key of required)
      assert.ok(
        set.includes(key ?? ''),
        `docker-compose.yml must set ${key}: the config has no default for it`,
      );
  });

  it('compose creates the schemas with the script the tests run', () => {
    const schema = service('temporal-schema');
    assert.ok((schema.entrypoint ?? []).some((a) => a.endsWith('/setup-schema.sh')));
    assert.equal(schema.environment?.SQL_PLUGIN, 'postgres12');
  });

  it('compose registers every search attribute the workflows use, with its type', () => {
    const script = (service('temporal-namespace').entrypoint ?? []).join('\n');
    const registered = [...script.matchAll(/(Ragen\w+)=(\w+)/g)].map((m) => `${m[1]}=${m[2]}`).sort();
    const expected = searchAttributeDefinitions()
      .map(({ name, type }) => `${name}=${type}`)
      .sort();
    assert.deepEqual(
      registered,
      expected,
      'docker-compose.yml temporal-namespace: the search attributes of src/workflows/search-attributes.ts',
    );
  });
});
