import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const module = new URL('../helpers/kubelet-standin/environment.ts', import.meta.url).href;

/** KUBE_ENV as a process with RAGEN_KUBE_ENV=`env` sees it (the names are read once, at import). */
async function namesOf(env: string | undefined): Promise<Record<string, string>> {
  const { RAGEN_KUBE_ENV: _, ...rest } = process.env;
  const { stdout } = await run(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `import(${JSON.stringify(module)}).then((m) => console.log(JSON.stringify(m.KUBE_ENV)))`,
    ],
    { env: env === undefined ? rest : { ...rest, RAGEN_KUBE_ENV: env } },
  );
  return JSON.parse(stdout) as Record<string, string>;
}

describe('the stand-in kube environment names (two KubeRay lanes on one machine)', () => {
  it('environment 0 keeps the names the stand-in always had', async () => {
    assert.deepEqual(await namesOf(undefined), {
      bridge: 'rgnk0',
      subnetPrefix: '10.87',
      serviceSubnetPrefix: '10.0.0',
      netnsPrefix: 'rk-',
      cgroupRoot: '/sys/fs/cgroup/unified/ragen-kubelet-standin',
      podsRoot: '/var/tmp/rk',
    });
  });

  it('two environments share no name, and neither cleans up what the other made', async () => {
    const [a, b] = await Promise.all([namesOf('0'), namesOf('1')]);
    for (const key of Object.keys(a)) {
      const [x, y] = [a[key]!, b[key]!];
      assert.notEqual(x, y, key);
      // Stale namespaces, cgroups and Pod folders are found by prefix (or as a folder's contents).
      assert.ok(!x.startsWith(`${y}/`) && !y.startsWith(`${x}/`), `${key}: ${x} / ${y}`);
    }
    assert.ok(!b.netnsPrefix!.startsWith(a.netnsPrefix!) && !a.netnsPrefix!.startsWith(b.netnsPrefix!));
  });

  it('refuses a value that is not one digit', async () => {
    await assert.rejects(namesOf('12'), /RAGEN_KUBE_ENV=12: one digit/);
  });
});
