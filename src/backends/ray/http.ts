import { request } from 'node:http';
import { ErrorTypes, TransientErrorTypes } from '../../domain/failures/error-types.js';
import { DomainError } from '../../errors/domain-error.js';
import { classifyObserved } from '../../errors/external-failures.js';

/**
 * Small JSON-over-HTTP helper for the Ray head's dashboard API, with a per-request timeout.
 * node:http rather than fetch: fetch always sends `Sec-Fetch-Mode`, and Ray's dashboard refuses
 * POSTs that look like browser traffic (HTTP 405).
 */

/** A non-2xx answer; permanent or not as EXTERNAL_FAILURE_RULES says of its status. */
export class RayHttpError extends DomainError {
  constructor(
    readonly status: number,
    readonly url: string,
    readonly body: string,
    /** Whether the request carried a token: what a 401 means depends on it. */
    tokenSent?: boolean,
  ) {
    const auth = status === 401 && tokenSent !== undefined ? ` (${tokenSent ? 'a' : 'no'} token sent)` : '';
    const permanent = classifyObserved({ status, body }).verdict === 'permanent';
    super({
      type: permanent ? ErrorTypes.RayDashboardRejected : TransientErrorTypes.RayDashboardUnavailable,
      message: `Ray dashboard ${url} answered HTTP ${status}${auth}: ${body.slice(0, 300)}`,
      permanent,
    });
    this.name = 'RayHttpError';
  }
}

/** No answer within the request's deadline (code ETIMEDOUT, so the failure table reads it as such). */
export class RayTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(url: string, ms: number) {
    super(`Ray dashboard ${url} did not answer within ${ms} ms`);
    this.name = 'RayTimeoutError';
  }
}

/** An answer that is not JSON: the dashboard is not what we think it is (permanent). */
export class RayMalformedAnswer extends DomainError {
  readonly malformed = true;
  constructor(url: string, why: string) {
    super({
      type: ErrorTypes.RayDashboardMalformed,
      message: `Ray dashboard ${url} answered with invalid JSON: ${why}`,
      permanent: true,
    });
  }
}

/**
 * `body` is sent as JSON; `bytes` as it is (a package upload); `token`: the cluster's Ray auth
 * token, sent as `authorization: Bearer` (never put in the URL or an error message).
 */
export async function requestJson<T>(url: string, init: RequestInit = {}): Promise<T> {
  const text = (await requestBytes(url, init)).toString('utf8');
  try {
    return (text ? JSON.parse(text) : {}) as T;
  } catch (err) {
    throw new RayMalformedAnswer(url, (err as Error).message);
  }
}

export type RequestInit = {
  method?: string;
  body?: unknown;
  bytes?: Buffer;
  timeoutMs?: number;
  accept?: string;
  token?: string;
};

/** The answer's bytes as they came, or RayHttpError for a non-2xx status. */
export function requestBytes(url: string, init: RequestInit = {}): Promise<Buffer> {
  const payload = init.bytes ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  const contentType = init.bytes ? 'application/octet-stream' : 'application/json';
  return new Promise<Buffer>((resolve, reject) => {
    const req = request(
      url,
      {
        method: init.method ?? 'GET',
        headers: {
          'user-agent': 'ragen-orchestrator',
          accept: init.accept ?? 'application/json',
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
          const bytes = Buffer.concat(chunks);
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300)
            return reject(new RayHttpError(status, url, bytes.toString('utf8'), init.token !== undefined));
          resolve(bytes);
        });
      },
    );
    req.on('timeout', () => req.destroy(new RayTimeoutError(url, init.timeoutMs ?? 10_000)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * A streamed GET (a followed log): chunks go to `onData` as they arrive; `onEnd` once, when the
 * server ends the answer or the connection breaks. Resolves when a 2xx answer starts; a non-2xx
 * answer rejects with RayHttpError.
 */
export function followBytes(
  url: string,
  onData: (chunk: Buffer) => void,
  onEnd: (err?: Error) => void,
  connectTimeoutMs = 10_000,
  token?: string,
): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    let ended = false;
    const end = (err?: Error) => {
      if (ended) return;
      ended = true;
      onEnd(err);
    };
    const req = request(
      url,
      {
        headers: {
          'user-agent': 'ragen-orchestrator',
          accept: 'text/plain',
          ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
        },
        timeout: connectTimeoutMs,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            reject(
              new RayHttpError(status, url, Buffer.concat(chunks).toString('utf8'), token !== undefined),
            ),
          );
          res.on('error', reject);
          return;
        }
        req.setTimeout(0); // a quiet log is not a dead connection
        res.on('data', onData);
        res.on('end', () => end());
        res.on('error', (err) => end(err));
        res.on('close', () => end());
        resolve({ close: () => req.destroy() });
      },
    );
    req.on('timeout', () => req.destroy(new RayTimeoutError(url, connectTimeoutMs)));
    req.on('error', (err) => {
      reject(err);
      end(err);
    });
    req.end();
  });
}
