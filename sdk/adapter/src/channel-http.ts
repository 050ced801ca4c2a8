import { fetchKeepingCredentialsHome } from '@holdfast/kernel/adapter';

/** Outcome of one channel request; `reason` names the host and status only: URL paths, headers and bodies may carry secrets. */
export type ServiceDelivery = { ok: true; status: number } | { ok: false; status?: number; reason: string };

/** One prepared HTTP request of a notification channel to its service. */
export interface ServiceRequest {
  url: string;
  method?: string;
  headers: Record<string, string>;
  body: string;
  /** The request's own bound; equal to the kernel's, so a hanging host is released when the kernel gives up. */
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

/** Host of a URL for messages, or a placeholder when the URL does not parse (its text may hold a secret). */
export function serviceHostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured URL';
  }
}

/**
 * Sends a channel's request with its own timeout and resolves an outcome; never rejects (channels must not throw). A
 * status counts as success when `isSuccess` says so (default: any 2xx).
 */
export async function deliverServiceRequest(
  request: ServiceRequest,
  isSuccess: (status: number) => boolean = (status) => status >= 200 && status < 300,
): Promise<ServiceDelivery> {
  const host = serviceHostOf(request.url);
  try {
    // A redirect to another host gets neither the channel's token headers nor the body (issue 41).
    const response = await fetchKeepingCredentialsHome(request.url, {
      method: request.method ?? 'POST',
      headers: { 'user-agent': 'Holdfast', ...request.headers },
      body: request.body,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    // The answer body is not needed (and may echo what was sent): release the connection.
    await response.body?.cancel().catch(() => undefined);
    if (isSuccess(response.status)) return { ok: true, status: response.status };
    return { ok: false, status: response.status, reason: `${host} answered HTTP ${response.status} ${response.statusText}`.trim() };
  } catch (error) {
    return { ok: false, reason: describeFailure(error, host, request.timeoutMs) };
  }
}
