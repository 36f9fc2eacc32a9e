/** Small JSON-over-HTTP helper for the Ray head's dashboard API, with a per-request timeout. */

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

export async function requestJson<T>(url: string, init: { method?: string; body?: unknown; timeoutMs?: number } = {}): Promise<T> {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: init.body === undefined ? undefined : { 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(init.timeoutMs ?? 10_000),
  });
  const text = await response.text();
  if (!response.ok) throw new RayHttpError(response.status, url, text);
  return (text ? JSON.parse(text) : {}) as T;
}
