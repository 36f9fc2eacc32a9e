/**
 * Bench: size and time of shipping a RAGEN-sized working tree (issue 30 item 1). The tree is
 * RAGEN's real one: mll-lab-nu/RAGEN at 20daedc with its verl submodule (volcengine/verl at
 * d62da49, RAGEN's pin) unpacked in verl/, committed to a fresh git repository (so it is listed as a
 * checkout is: `git ls-files`). It is listed, packed (src/activities/code/code-shipping.ts's steps),
 * packed again (the bytes must be equal), uploaded through a real Ray head's package API, checked
 * by a second upload (a GET only), and used as the working_dir of a real Ray job that imports
 * RAGEN's package from it
 * (finds it there: importing it needs verl's and torch's dependencies, which an image has).
 *   flock /tmp/ray-tests.lock npx tsx bench/code-shipping.ts <ragen mirror> <verl mirror>
 * (or RAGEN_MIRROR and VERL_MIRROR). The mirrors are git directories holding those commits (a bare
 * clone, or a clone's .git); a blob a mirror lacks (its largest files) is written as incompressible
 * bytes of the listed size.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildCodePackage } from '../src/backends/ray/code-package.js';
import { RayDashboardClient, TERMINAL_JOB_STATES } from '../src/backends/ray/dashboard-client.js';
import { ensurePackageUploaded } from '../src/backends/ray/py-modules.js';
import { loadConfig } from '../src/config/config.js';
import { listCodeTree, readCodeTree } from '../src/provenance/code-tree.js';
import { writeResults } from './results.js';
import { withRayHead } from './standins/ray-head-only.js';

/** The code these numbers depend on (bench/results.ts): a change to it makes them stale. */
const measuredCode = [
  'bench/code-shipping.ts',
  'bench/standins/ray-head-only.ts',
  'src/backends/ray/code-package.ts',
  'src/backends/ray/dashboard-client.ts',
  'src/backends/ray/py-modules.ts',
  'src/provenance/code-tree.ts',
];

const RAGEN = { mirror: mirrorOf(2, 'RAGEN_MIRROR', 'mll-lab-nu/RAGEN'), commit: '20daedc' };
const VERL = { mirror: mirrorOf(3, 'VERL_MIRROR', 'volcengine/verl'), commit: 'd62da49' };
const config = loadConfig(process.env);

/** The git directory of a mirror: the argument at `index`, else the variable; neither is an error saying so. */
function mirrorOf(index: number, variable: string, repo: string): string {
  const dir = process.argv[index] ?? process.env[variable];
  if (!dir) {
    console.error(
      `bench/code-shipping.ts: no mirror of github.com/${repo}: pass its git directory as argument ${index - 1} or set ${variable}`,
    );
    process.exit(2);
  }
  return dir;
}

/**
 * A mirror's commit written into dir, file by file. The mirror may lack its largest blobs (images,
 * the paper's PDF): those are written as pseudo-random bytes of the listed size, which compress as
 * little as the PNGs and PDF they stand for. Returns how many files and bytes were stood in.
 */
function unpack(
  mirror: string,
  commit: string,
  dir: string,
): { files: number; bytes: number; assumedSizes: string[] } {
  const listing = execFileSync('git', ['--git-dir', mirror, 'ls-tree', '-r', '-l', '-z', commit], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const blobs = listing
    .split('\0')
    .filter((l) => l !== '')
    .map((l) => {
      const [meta = '', path = ''] = l.split('\t');
      const [mode = '', type = '', sha = '', size = ''] = meta.split(/\s+/);
      // `BAD`: the mirror lacks the blob and git cannot tell its size: an assumed one (ASSUMED_SIZE).
      const known = /^\d+$/.test(size);
      return { mode, type, sha, size: known ? Number(size) : assumedSize(path), assumed: !known, path };
    })
    .filter((b) => b.type === 'blob');
  const batch = execFileSync('git', ['--git-dir', mirror, 'cat-file', '--batch'], {
    input: blobs.map((b) => b.sha).join('\n') + '\n',
    maxBuffer: 1 << 30,
  });
  const stoodIn = { files: 0, bytes: 0, assumedSizes: [] as string[] };
  let at = 0;
  for (const b of blobs) {
    const eol = batch.indexOf(10, at);
    const header = batch.subarray(at, eol).toString();
    let data: Buffer;
    if (header.endsWith(' missing')) {
      data = pseudoRandom(b.sha, b.size);
      stoodIn.files++;
      stoodIn.bytes += b.size;
      if (b.assumed) stoodIn.assumedSizes.push(`${b.path}: ${b.size}`);
      at = eol + 1;
    } else {
      const size = Number(header.split(' ')[2]);
      data = batch.subarray(eol + 1, eol + 1 + size);
      at = eol + 1 + size + 1;
    }
    const path = join(dir, b.path);
    mkdirSync(dirname(path), { recursive: true });
    if (b.mode === '120000') symlinkSync(data.toString(), path);
    else writeFileSync(path, data, { mode: b.mode === '100755' ? 0o755 : 0o644 });
  }
  return stoodIn;
}

/**
 * Sizes for blobs whose size the mirror cannot tell (20daedc: RAGEN-2.pdf and two PNGs): RAGEN.pdf
 * (the first paper) is 1.48 MB and its figures 0.1-0.7 MB; these err on the large side.
 */
const ASSUMED_SIZE = { pdf: 5_000_000, other: 700_000 };
const assumedSize = (path: string) => (path.endsWith('.pdf') ? ASSUMED_SIZE.pdf : ASSUMED_SIZE.other);

/** Incompressible bytes, the same for the same seed (sha256 in counter mode). */
function pseudoRandom(seed: string, size: number): Buffer {
  const out = Buffer.alloc(size);
  for (let i = 0; i * 32 < size; i++)
    createHash('sha256')
      .update(`${seed}:${i}`)
      .digest()
      .copy(out, i * 32);
  return out;
}

const ms = (t0: number) => Math.round(performance.now() - t0);

const root = await mkdtemp(join(tmpdir(), 'ragen-tree-'));
try {
  const ragenStoodIn = unpack(RAGEN.mirror, RAGEN.commit, root);
  const verlStoodIn = unpack(VERL.mirror, VERL.commit, join(root, 'verl'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=b@example.com', '-c', 'user.name=b', ...args], { cwd: root });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'RAGEN 20daedc with verl d62da49');

  let t0 = performance.now();
  const tree = await listCodeTree(root, []);
  const listMs = ms(t0);
  t0 = performance.now();
  const pkg = buildCodePackage(await readCodeTree(tree));
  const packMs = ms(t0);
  const again = buildCodePackage(await readCodeTree(await listCodeTree(root, [])));
  if (!again.bytes.equals(pkg.bytes)) throw new Error('packing the same tree twice gave other bytes');

  const numbers = await withRayHead(async (dashboardUrl, _tempDir, token) => {
    const head = new RayDashboardClient(dashboardUrl, token);
    let t = performance.now();
    const first = await ensurePackageUploaded(head, pkg);
    const uploadMs = ms(t);
    t = performance.now();
    const second = await ensurePackageUploaded(head, pkg);
    const presentMs = ms(t);
    if (!first.uploaded || second.uploaded) throw new Error('expected one upload, then none');
    // A job in the shipped tree: Ray unpacks it as the cwd; RAGEN's package imports from there.
    const id = `code-shipping-${process.pid}`;
    t = performance.now();
    // find_spec, not import: importing ragen needs verl's and torch's dependencies (an image's), not here.
    const probe = `import os, importlib.util as u; assert os.path.exists('train.py') and os.path.exists('verl/verl/__init__.py'); print('RAGEN_FROM', u.find_spec('ragen').origin)`;
    await head.submitJob(id, `${config.python} -c "${probe}"`, {}, [], pkg.uri);
    for (;;) {
      const job = await head.job(id);
      if (job && TERMINAL_JOB_STATES.has(job.status)) {
        if (job.status !== 'SUCCEEDED')
          throw new Error(`job ${job.status}: ${job.message}\n${await head.jobLogs(id)}`);
        break;
      }
      await sleep(100);
    }
    const jobMs = ms(t);
    const logs = await head.jobLogs(id);
    if (!/RAGEN_FROM .*_ray_pkg_/.test(logs))
      throw new Error(`ragen was not imported from the shipped tree: ${logs}`);
    return { uploadMs, presentMs, jobMs };
  });
  const result = {
    tree: `mll-lab-nu/RAGEN@${RAGEN.commit} + verl@${VERL.commit} in verl/ (one git work tree)`,
    files: pkg.files,
    // Blobs the mirrors lack (the largest: images, a PDF), written as incompressible bytes of their size.
    stoodIn: {
      files: ragenStoodIn.files + verlStoodIn.files,
      bytes: ragenStoodIn.bytes + verlStoodIn.bytes,
      assumedSizes: [...ragenStoodIn.assumedSizes, ...verlStoodIn.assumedSizes],
    },
    treeBytes: pkg.treeBytes,
    archiveBytes: pkg.bytes.length,
    package: pkg.name,
    listMs,
    readAndPackMs: packMs,
    deterministic: true,
    firstUploadMs: numbers.uploadMs,
    alreadyPresentMs: numbers.presentMs,
    jobWithWorkingDirMs: numbers.jobMs,
    note: 'one-node local Ray head on loopback (the upload is the PUT to its dashboard; no network in between); the job time includes the unpack and a Python start',
  };
  console.log(JSON.stringify(result, null, 2));
  writeResults('code-shipping', measuredCode, result);
} finally {
  await rm(root, { recursive: true, force: true });
}
