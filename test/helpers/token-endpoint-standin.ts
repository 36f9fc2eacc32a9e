import { execFile } from 'node:child_process';
import { createPrivateKey, randomUUID, sign, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * STAND-IN for a registry's token service (what Docker Hub's auth.docker.io does): it checks Basic
 * credentials and issues RS256 JWTs that the real Distribution registry, configured with
 * `auth: token` and this endpoint's certificate as rootcertbundle, accepts. Only for tests.
 */
export interface TokenEndpointStandIn {
  realm: string;
  service: string;
  issuer: string;
  certPath: string;
  /** Requests seen (for assertions): whether Basic credentials came with them, and the scope. */
  requests: { basic: boolean; scope: string | null }[];
  /** A token for the given scope, without HTTP (the test helpers push images with it). */
  mint(scope: string): string;
  stop(): Promise<void>;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export async function startTokenEndpoint(credentials: {
  username: string;
  password: string;
}): Promise<TokenEndpointStandIn> {
  const dir = await mkdtemp(join(tmpdir(), 'token-standin-'));
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    keyPath,
    '-out',
    certPath,
    '-days',
    '1',
    '-subj',
    '/CN=token-endpoint-standin',
  ]);
  const key = createPrivateKey(await readFile(keyPath));
  const certDer = new X509Certificate(await readFile(certPath)).raw;
  const service = 'standin-registry';
  const issuer = 'token-endpoint-standin';
  const requests: TokenEndpointStandIn['requests'] = [];

  function mint(scope: string): string {
    const access = scope
      .split(' ')
      .filter(Boolean)
      .map((s) => {
        const [type, name, actions] = s.split(':');
        return { type, name, actions: (actions ?? '').split(',') };
      });
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'RS256', x5c: [certDer.toString('base64')] }));
    const claims = b64url(
      JSON.stringify({
        iss: issuer,
        sub: credentials.username,
        aud: service,
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomUUID(),
        access,
      }),
    );
    const signature = b64url(sign('sha256', Buffer.from(`${header}.${claims}`), key));
    return `${header}.${claims}.${signature}`;
  }

  const expected = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const basic = req.headers.authorization !== undefined;
    requests.push({ basic, scope: url.searchParams.get('scope') });
    if (req.headers.authorization !== expected) {
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end('{"details":"bad or missing credentials"}');
      return;
    }
    const token = mint(url.searchParams.get('scope') ?? '');
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ token, expires_in: 300 }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    realm: `http://127.0.0.1:${port}/token`,
    service,
    issuer,
    certPath,
    requests,
    mint,
    async stop() {
      await new Promise((r) => server.close(r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
