import { request } from 'node:http';

/**
 * Small JSON-over-HTTP helper for the Ray head's dashboard API, with a per-request timeout.
 * node:http rather than fetch: fetch always sends `Sec-Fetch-Mode`, and Ray's dashboard refuses
 * POSTs that look like browser traffic (HTTP 405).
 */

export class RayHttpError extends Error {
  constructor(
    readonly status: number,
    readonly url: string,
    readonly body: string,
  ) {
    super(`Ray dashboard ${url} answered HTTP ${status}: ${body.slice(0, 300)}`);
    this.name = 'RayHttpError';
  }
}

/**
 * `body` is sent as JSON; `bytes` as it is (a package upload); `token`: the cluster's Ray auth
 * token, sent as `authorization: Bearer` (never put in the URL or an error message).
 */
export function requestJson<T>(
  url: string,
  init: { method?: string; body?: unknown; bytes?: Buffer; timeoutMs?: number; token?: string } = {},
): Promise<T> {
  const payload = init.bytes ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  const contentType = init.bytes ? 'application/octet-stream' : 'application/json';
  return new Promise<T>((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? 'GET',
        headers: {
          'user-agent': 'ragen-orchestrator',
          accept: 'application/json',
          ...(init.token !== undefined ? { authorization: `Bearer ${init.token}` } : {}),
          ...(payload !== undefined
            ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
        timeout: init.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) return reject(new RayHttpError(status, url, text));
          try {
            resolve((text ? JSON.parse(text) : {}) as T);
          } catch (err) {
            reject(new Error(`Ray dashboard ${url} answered with invalid JSON: ${(err as Error).message}`));
          }
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`Ray dashboard ${url} did not answer within ${init.timeoutMs ?? 10_000} ms`)),
    );
    req.on('error', reject);
    req.end(payload);
  });
}
