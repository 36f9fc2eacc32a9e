import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';

/**
 * A STAND-IN for the Hugging Face Hub (this machine reaches no hub): a local directory
 * `<root>/<org>/<name>/<revision>/…` served over HTTP with the three routes huggingface_hub's
 * snapshot_download uses for a pinned commit: the recursive tree listing
 * (`/api/models/<repo>/tree/<rev>`), and HEAD and GET of `/<repo>/resolve/<rev>/<file>` with the
 * X-Repo-Commit and ETag headers it reads. Unknown repositories and revisions answer 404 with the
 * Hub's X-Error-Code. Every request is recorded, so a test can show that nothing went online.
 */
export interface HubStandin {
  endpoint: string;
  requests: string[];
  stop(): Promise<void>;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(full)));
    else out.push(full);
  }
  return out;
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  );

export async function startHubStandin(root: string): Promise<HubStandin> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://hub');
    requests.push(`${req.method} ${url.pathname}`);
    void (async () => {
      const tree = /^\/api\/models\/([^/]+\/[^/]+)\/tree\/([^/]+)$/.exec(url.pathname);
      const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
      const [repo, revision] = tree ? [tree[1]!, tree[2]!] : resolve ? [resolve[1]!, resolve[2]!] : ['', ''];
      if (!repo) return res.writeHead(404).end();
      if (!(await exists(join(root, repo))))
        return res.writeHead(404, { 'X-Error-Code': 'RepoNotFound' }).end('{}');
      const base = join(root, repo, revision);
      if (!(await exists(base))) return res.writeHead(404, { 'X-Error-Code': 'RevisionNotFound' }).end('{}');
      if (tree) {
        const entries = await Promise.all(
          (await filesUnder(base)).map(async (f) => ({
            type: 'file',
            path: relative(base, f),
            size: (await stat(f)).size,
            oid: createHash('sha1')
              .update(await readFile(f))
              .digest('hex'),
          })),
        );
        return res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(entries));
      }
      const file = join(base, decodeURIComponent(resolve![3]!));
      if (!file.startsWith(`${base}/`) || !(await exists(file)))
        return res.writeHead(404, { 'X-Error-Code': 'EntryNotFound' }).end('{}');
      const body = await readFile(file);
      res.writeHead(200, {
        'X-Repo-Commit': revision,
        ETag: `"${createHash('sha256').update(body).digest('hex')}"`,
        'Content-Length': String(body.length),
        'Content-Type': 'application/octet-stream',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    requests,
    stop: () => new Promise((r) => server.close(() => r())),
  };
}
