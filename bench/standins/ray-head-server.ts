/**
 * Stand-in Ray head for bench/long-run.ts (not Ray): the few endpoints the train activity uses,
 * over real HTTP in its own process. A submitted "job" prints `lines` console lines over `seconds`
 * to a log file (a verl-style step line every `linesPerStep`, a checkpoint tracker every 100 steps),
 * and the log stream follows that file as Ray's log agent does (read to the end, then every 0.25 s).
 *   tsx bench/standins/ray-head-server.ts <lines> <seconds> <linesPerStep> <checkpointDir> <logFile>
 */
import { createServer, type ServerResponse } from 'node:http';
import { appendFileSync, openSync, readSync, writeFileSync } from 'node:fs';

const [lines, seconds, linesPerStep] = process.argv.slice(2, 5).map(Number) as [number, number, number];
const [checkpointDir, logFile] = process.argv.slice(5, 7) as [string, string];
const filler = '(WorkerDict pid=4242) INFO rollout worker: generated batch, tokens=512 ' + 'x'.repeat(60);
let status = 'PENDING';
let written = 0;

function runJob(): void {
  status = 'RUNNING';
  writeFileSync(logFile, '');
  const started = Date.now();
  const tick = setInterval(() => {
    const due = Math.min(lines, Math.floor(((Date.now() - started) / (seconds * 1000)) * lines));
    const out: string[] = [];
    for (; written < due;) {
      written++;
      if (written % linesPerStep === 0) {
        const step = written / linesPerStep;
        out.push(
          `(TaskRunner pid=1) step:${step} - critic/score/mean:${(step % 97) / 97} - actor/loss:${1 / step} - timing_s/step:0.1`,
        );
        if (step % 100 === 0)
          writeFileSync(`${checkpointDir}/latest_checkpointed_iteration.txt`, String(step));
      } else out.push(filler);
    }
    if (out.length > 0) appendFileSync(logFile, `${out.join('\n')}\n`);
    if (written >= lines) {
      clearInterval(tick);
      status = 'SUCCEEDED';
    }
  }, 20);
}

function follow(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain' });
  const fd = openSync(logFile, 'r');
  let at = 0;
  const buf = Buffer.alloc(1 << 20);
  const pump = () => {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, at);
      if (n === 0) break;
      at += n;
      res.write(Buffer.from(buf.subarray(0, n)));
    }
  };
  pump();
  const timer = setInterval(pump, 250);
  res.on('close', () => clearInterval(timer));
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const json = (body: unknown) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (req.method === 'POST' && url.pathname === '/api/jobs/') {
    req.resume();
    if (status === 'PENDING') runJob();
    return json({ submission_id: 'x' });
  }
  if (url.pathname === '/api/version') return json({ ray_version: '2.60.0' });
  if (url.pathname.startsWith('/api/jobs/') && url.pathname.endsWith('/stop')) {
    status = 'STOPPED';
    return json({ stopped: true });
  }
  if (url.pathname.startsWith('/api/jobs/'))
    return json({
      status,
      message: '',
      driver_node_id: status === 'PENDING' ? null : 'stand-in-node',
      driver_exit_code: status === 'SUCCEEDED' ? 0 : null,
    });
  if (url.pathname === '/api/v0/logs/stream') return follow(res);
  res.writeHead(404).end('not found');
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') console.log(`listening ${address.port}`);
});
