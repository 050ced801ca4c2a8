/** Base class of every error the client throws, so callers can tell client errors from their own. */
export class HoldfastError extends Error {
  override name = 'HoldfastError';
}

/** The server answered with a non-2xx status; `body` is the parsed JSON body (or the raw text). */
export class HoldfastApiError extends HoldfastError {
  override name = 'HoldfastApiError';
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly method: string,
    readonly path: string,
  ) {
    super(`${method} ${path} answered ${status}: ${describeBody(body)}`);
  }

  /** The server's own message (`{ error }` or `{ message }`), when the body carries one. */
  get serverMessage(): string | undefined {
    if (this.body && typeof this.body === 'object') {
      const record = this.body as Record<string, unknown>;
      for (const key of ['error', 'message']) if (typeof record[key] === 'string') return record[key];
    }
    return typeof this.body === 'string' && this.body ? this.body : undefined;
  }
}

/** The server could not be reached (DNS, refused connection, TLS, timeout): no HTTP answer at all. */
export class HoldfastNetworkError extends HoldfastError {
  override name = 'HoldfastNetworkError';
  constructor(
    readonly url: string,
    override readonly cause: unknown,
  ) {
    super(`cannot reach ${url}: ${causeText(cause)}`);
  }
}

function describeBody(body: unknown): string {
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    if (typeof record.error === 'string') return record.error;
    if (typeof record.message === 'string') return record.message;
    return JSON.stringify(body).slice(0, 200);
  }
  return String(body ?? '').slice(0, 200) || '(empty body)';
}

/** fetch wraps the interesting part (ECONNREFUSED, ENOTFOUND) in `cause`; surface it. */
function causeText(cause: unknown): string {
  if (cause instanceof Error) {
    const inner = (cause as Error & { cause?: unknown }).cause;
    if (inner instanceof Error) return inner.message;
    return cause.message;
  }
  return String(cause);
}

/** Reads an error answer into a HoldfastApiError (JSON body when it parses, the text otherwise). */
export async function apiError(method: string, url: string, response: Response): Promise<HoldfastApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return new HoldfastApiError(response.status, body, method, new URL(url).pathname);
}
