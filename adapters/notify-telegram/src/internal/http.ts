import { fetchKeepingCredentialsHome } from '@holdfast/sdk';

/** Outcome of one request; `reason` names the host, status and Telegram's description only, never the token. */
export type Delivery = { ok: true; status: number } | { ok: false; status?: number; reason: string };

/** One prepared Bot API call. */
export interface BotApiRequest {
  /** Contains the token in its path: never echoed. */
  url: string;
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

/** Telegram's `description` (e.g. "Bad Request: chat not found"), which says what to fix; never contains the token. */
async function descriptionOf(response: Response): Promise<string | undefined> {
  try {
    const text = (await response.text()).slice(0, 4096);
    const description = (JSON.parse(text) as { description?: unknown }).description;
    return typeof description === 'string' ? description.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}

/** Calls the Bot API with its own timeout and resolves an outcome; never rejects. */
export async function callBotApi(request: BotApiRequest): Promise<Delivery> {
  let host = 'the Bot API server';
  try {
    host = new URL(request.url).host;
    const response = await fetchKeepingCredentialsHome(request.url, {
      method: 'POST',
      headers: { 'user-agent': 'Holdfast', 'content-type': 'application/json' },
      body: request.body,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    if (response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: true, status: response.status };
    }
    const description = await descriptionOf(response);
    const status = `${host} answered HTTP ${response.status} ${response.statusText}`.trim();
    return { ok: false, status: response.status, reason: description ? `${status}: ${description}` : status };
  } catch (error) {
    return { ok: false, reason: describeFailure(error, host, request.timeoutMs) };
  }
}
