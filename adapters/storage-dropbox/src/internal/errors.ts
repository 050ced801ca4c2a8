import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const DROPBOX_ORIGIN = { kind: 'storage', id: 'dropbox' } as const;

/** An error answer of the Dropbox API: HTTP status plus the `error_summary` of its JSON body (or its text). */
export class DropboxApiError extends Error {
  override readonly name = 'DropboxApiError';
  constructor(
    readonly status: number,
    readonly summary: string,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}${summary ? `, ${summary}` : ''}`);
  }

  /** True for the summaries of a missing path (`path/not_found/..`, `path_lookup/not_found/..`). */
  get isNotFound(): boolean {
    return /(^|\/)not_found(\/|$)/.test(this.summary) && !this.summary.startsWith('incorrect_offset');
  }
}

/** Reads an error answer into a {@link DropboxApiError}; Dropbox sends JSON for 401/409 and plain text for 400. */
export async function apiErrorOf(response: Response): Promise<DropboxApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  let summary = text.slice(0, 300);
  try {
    body = JSON.parse(text);
    const parsed = body as { error_summary?: unknown; error?: unknown; error_description?: unknown };
    if (typeof parsed.error_summary === 'string') summary = parsed.error_summary;
    else if (typeof parsed.error === 'string') summary = `${parsed.error}${typeof parsed.error_description === 'string' ? `: ${parsed.error_description}` : ''}`;
  } catch {
    // Plain-text bodies (400 bad input) keep their text as the summary.
  }
  return new DropboxApiError(response.status, summary, body);
}

const HINTS: Array<[RegExp, string]> = [
  [/^expired_access_token/, 'the access token expired and could not be refreshed'],
  [/^invalid_access_token/, 'the access token was revoked or is invalid: re-authorize the app and update the OAUTH credential profile'],
  [/^missing_scope/, 'the app lacks a scope: enable files.metadata.read, files.content.read and files.content.write, then re-authorize'],
  [/insufficient_space/, 'the Dropbox account is full'],
  [/no_write_permission/, 'the app may not write there (an App-folder app can only reach its own folder)'],
  [/too_many_write_operations|too_many_requests/, 'Dropbox is rate limiting writes; try again later'],
];

function codeOf(error: DropboxApiError): AdapterErrorCode {
  if (error.isNotFound) return 'NOT_FOUND';
  if (error.status === 401 || error.status === 403 || /no_write_permission|missing_scope/.test(error.summary)) return 'AUTH';
  if (error.status === 429 || error.status >= 500 || /incorrect_offset|too_many/.test(error.summary)) return 'TRANSIENT';
  if (error.status === 400 || error.status === 409 || error.status === 416) return 'CONFIG';
  return 'TRANSIENT';
}

/** Maps an API, network or abort error to an AdapterError; `what` names the failed operation. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  if (error instanceof DropboxApiError) {
    const hint = HINTS.find(([pattern]) => pattern.test(error.summary))?.[1];
    return new AdapterError(DROPBOX_ORIGIN, codeOf(error), `${what}: ${error.message}${hint ? ` (${hint})` : ''}`, { cause: error });
  }
  const raw = error as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  if (raw?.name === 'AbortError' || raw?.name === 'TimeoutError') {
    return new AdapterError(DROPBOX_ORIGIN, raw.name === 'AbortError' ? 'ABORTED' : 'TRANSIENT', `${what}: ${raw.name === 'AbortError' ? 'aborted' : 'timed out'}`, { cause: error });
  }
  // fetch() wraps socket errors as "fetch failed" with the system error as cause.
  const cause = raw?.cause?.code ?? raw?.cause?.message ?? raw?.message ?? String(error);
  return new AdapterError(DROPBOX_ORIGIN, 'TRANSIENT', `${what}: cannot reach Dropbox (${cause})`, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(DROPBOX_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string, cause?: unknown): AdapterError {
  return new AdapterError(DROPBOX_ORIGIN, 'ABORTED', `${what} was aborted`, { cause });
}
