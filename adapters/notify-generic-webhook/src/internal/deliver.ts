import { fetchKeepingCredentialsHome } from '@holdfast/sdk';

/** Outcome of one webhook request; `reason` never holds the URL path, headers or body (they may carry secrets). */
export type Delivery = { ok: true; status: number; statusText: string } | { ok: false; status?: number; reason: string };

/** One prepared request. */
export interface WebhookRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string;
  timeoutMs: number;
}

function describeFailure(error: unknown, host: string, timeoutMs: number): string {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `${host} did not answer within ${timeoutMs / 1000} s`;
  // undici reports network failures as TypeError('fetch failed') with the system error as cause.
  const cause = (error as { cause?: { code?: string } } | null)?.cause;
  if (cause?.code) return `cannot reach ${host} (${cause.code})`;
  return `request to ${host} failed (${name ?? 'unknown error'})`;
}

/** Sends the request with its own timeout and resolves an outcome; never rejects. */
export async function deliver(request: WebhookRequest): Promise<Delivery> {
  const host = new URL(request.url).host;
  try {
    // The secret custom headers and the body never follow a redirect to another host (issue 41).
    const response = await fetchKeepingCredentialsHome(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    // The body is not needed (and may echo what we sent); release the connection.
    await response.body?.cancel().catch(() => undefined);
    if (response.ok) return { ok: true, status: response.status, statusText: response.statusText };
    return { ok: false, status: response.status, reason: `${host} answered HTTP ${response.status} ${response.statusText}`.trim() };
  } catch (error) {
    return { ok: false, reason: describeFailure(error, host, request.timeoutMs) };
  }
}
