/**
 * Benchmark: the verify stage against real Distribution registries on loopback (Debian's
 * docker-registry): the image check alone (a stand-in backend answers the planned Ray version),
 * per auth mode and image kind, and the whole verify activity with the real local backend (which
 * also runs `ray --version` from the venv). Prints median and p90 over several runs.
 *   npx tsx bench/verify.ts [runs]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createVerify } from '../src/activities/verify/verify.js';
import { createBackends } from '../src/backends/registry.js';
import { loadConfig } from '../src/config/config.js';
import { RegistryClient } from '../src/registry/client.js';
import { RAY_VERSION_LABEL } from '../src/registry/ray-version.js';
import { fakeBackend, readyCluster } from '../test/helpers/fake-ray-head.js';
import { pushImage, pushIndex } from '../test/helpers/oci-images.js';
import { type RunningRegistry, startRegistry } from '../test/helpers/oci-registry.js';
import { testSpec } from '../test/helpers/specs.js';
import { startTokenEndpoint } from '../test/helpers/token-endpoint-standin.js';
import { writeResults } from './results.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/verify.ts',
  'src/activities/verify/verify.ts',
  'src/registry',
  'test/helpers/oci-registry.ts',
];

const runs = Number(process.argv[2] ?? 21);
const user = { username: 'bench', password: 'bench-password' };
const labels = { [RAY_VERSION_LABEL]: '2.60.0' };
const dir = await mkdtemp(join(tmpdir(), 'bench-verify-'));
const registries: RunningRegistry[] = [];
const tokens = await startTokenEndpoint(user);
try {
  const open = await startRegistry();
  const basic = await startRegistry({ kind: 'htpasswd', ...user });
  const bearer = await startRegistry({
    kind: 'token',
    realm: tokens.realm,
    service: tokens.service,
    issuer: tokens.issuer,
    rootCertBundle: tokens.certPath,
  });
  registries.push(open, basic, bearer);
  const basicHeader = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
  const dockerConfig = join(dir, 'config.json');
  const auth = Buffer.from(`${user.username}:${user.password}`).toString('base64');
  await writeFile(
    dockerConfig,
    JSON.stringify({ auths: { [basic.host]: { auth }, [bearer.host]: { auth } } }),
  );

  const cases: [string, string][] = [
    [
      'single-platform, anonymous',
      `${open.host}/ragen@${await pushImage({ baseUrl: open.baseUrl, repository: 'ragen' }, { labels })}`,
    ],
    [
      'two-platform index, anonymous',
      `${open.host}/multi@${(await pushIndex({ baseUrl: open.baseUrl, repository: 'multi' }, { amd64: { labels }, arm64: { labels } })).digest}`,
    ],
    [
      'single-platform, Basic (htpasswd)',
      `${basic.host}/ragen@${await pushImage({ baseUrl: basic.baseUrl, repository: 'ragen', authorization: basicHeader }, { labels })}`,
    ],
    [
      'single-platform, Bearer (stand-in token endpoint)',
      `${bearer.host}/ragen@${await pushImage({ baseUrl: bearer.baseUrl, repository: 'ragen', authorization: `Bearer ${tokens.mint('repository:ragen:pull,push')}` }, { labels })}`,
    ],
  ];
  const base = {
    rayHead: () => {
      throw new Error('unused');
    },
    reportProgress: async () => undefined,
    workflowStatus: async () => undefined,
    pollIntervalMs: 1000,
    imageRegistry: new RegistryClient({ dockerConfigPath: dockerConfig }),
  };
  const imageOnly = createVerify({ ...base, backends: { local: fakeBackend(() => readyCluster(2, 2)) } });
  const whole = createVerify({ ...base, backends: createBackends(loadConfig()) });

  const measured: { case: string; medianMs: number; p90Ms: number; minMs: number; runs: number }[] = [];
  const time = async (verify: typeof imageOnly, image: string, n: number, name: string) => {
    const ms: number[] = [];
    await verify({ spec: testSpec({ image }) }); // warm-up (connection, JIT)
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await verify({ spec: testSpec({ image }) });
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const q = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] ?? NaN;
    const at = (p: number) => q(p).toFixed(1);
    measured.push({ case: name, medianMs: q(0.5), p90Ms: q(0.9), minMs: q(0), runs: n });
    return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, min ${at(0)} ms (${n} runs)`;
  };
  console.log('verify stage against loopback Distribution registries');
  for (const [name, image] of cases)
    console.log(`  image check, ${name}: ${await time(imageOnly, image, runs, `image check, ${name}`)}`);
  const first = cases[0]?.[1] ?? '';
  console.log(
    `  whole verify activity, local backend (ray --version + image check): ${await time(whole, first, Math.min(runs, 5), 'whole verify activity, local backend')}`,
  );
  writeResults('verify', measuredCode, { measured });
} finally {
  for (const r of registries) await r.stop();
  await tokens.stop();
  await rm(dir, { recursive: true, force: true });
}
