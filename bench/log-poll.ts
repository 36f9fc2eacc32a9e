/**
 * Bench: bytes read per poll of a growing driver log stay flat (issue 15 item 3). A real Ray job
 * on a real one-node local Ray cluster (the stand-in job bench/standins/log-writer.py writes a
 * 200 MB log over about 60 s) is read by the train activity's JobLogReader once a second; the
 * copy it makes is compared with Ray's own log file at the end.
 *   flock /tmp/ray-test.lock npx tsx bench/log-poll.ts [MB] [seconds]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobLogReader } from '../src/activities/train/job-log-reader.js';
import { RayDashboardClient, TERMINAL_JOB_STATES } from '../src/backends/ray/dashboard-client.js';
import { loadConfig } from '../src/config/config.js';
import { withRayHead } from './standins/ray-head-only.js';

const mb = Number(process.argv[2] ?? 200);
const seconds = Number(process.argv[3] ?? 60);
const config = loadConfig(process.env);
const writer = join(import.meta.dirname, 'standins', 'log-writer.py');
const sha256 = async (path: string) =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

interface Poll {
  at: number;
  bytesRead: number;
  newBytes: number;
  logBytes: number;
  ms: number;
}

await withRayHead(async (dashboardUrl, rayTemp, token) => {
  const head = new RayDashboardClient(dashboardUrl, token);
  const id = `log-poll-${process.pid}`;
  const out = await mkdtemp(join(tmpdir(), 'log-poll-'));
  const copy = join(out, 'train.log');
  await head.submitJob(id, `${config.python} ${writer} ${mb} ${seconds} 1000`, {});
  const reader = await JobLogReader.resume(head, id, copy);
  const polls: Poll[] = [];
  const started = Date.now();
  for (;;) {
    const job = await head.job(id);
    const terminal = job !== undefined && TERMINAL_JOB_STATES.has(job.status);
    const t0 = performance.now();
    const before = reader.bytesCopied;
    const read = await reader.poll(job?.driverNodeId, { final: terminal });
    const ms = performance.now() - t0;
    polls.push({
      at: (Date.now() - started) / 1000,
      bytesRead: read.bytesRead,
      newBytes: reader.bytesCopied - before,
      logBytes: reader.bytesCopied,
      ms,
    });
    if (terminal) {
      if (job.status !== 'SUCCEEDED') throw new Error(`stand-in job ended ${job.status}: ${job.message}`);
      break;
    }
    await sleep(1000);
  }
  const rayLog = join(rayTemp, 'session_latest', 'logs', `job-driver-${id}.log`);
  const same = (await sha256(copy)) === (await sha256(rayLog));
  const growing = polls.filter((p) => p.newBytes > 0);
  const fmt = (p: Poll) =>
    `  t=${p.at.toFixed(1).padStart(5)} s  log ${(p.logBytes / 1e6).toFixed(1).padStart(6)} MB  read ${(p.bytesRead / 1e3).toFixed(0).padStart(6)} kB  new ${(p.newBytes / 1e3).toFixed(0).padStart(6)} kB  ${p.ms.toFixed(0).padStart(4)} ms`;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const tenth = Math.max(3, Math.floor(growing.length / 10));
  const first = growing.slice(1, 1 + tenth);
  const last = growing.slice(-tenth - 1, -1);
  console.log(
    `stand-in job wrote ${((await stat(rayLog)).size / 1e6).toFixed(1)} MB in ${polls.length} polls (1 s apart)`,
  );
  console.log('first polls:');
  for (const p of growing.slice(0, 5)) console.log(fmt(p));
  console.log('last polls:');
  for (const p of growing.slice(-5)) console.log(fmt(p));
  const a = median(first.map((p) => p.bytesRead));
  const b = median(last.map((p) => p.bytesRead));
  console.log(
    `median bytes read per poll: start ${(a / 1e3).toFixed(0)} kB, end ${(b / 1e3).toFixed(0)} kB (ratio ${(b / a).toFixed(2)}); ` +
      `reading the whole log per poll would read ${(polls.at(-1)!.logBytes / 1e6).toFixed(0)} MB at the end`,
  );
  console.log(`copy identical to Ray's job-driver log: ${same ? 'yes' : 'NO'}`);
  await rm(out, { recursive: true, force: true });
  if (!same) process.exitCode = 1;
});
