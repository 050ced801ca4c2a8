import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const ONEDRIVE_ORIGIN = { kind: 'storage', id: 'onedrive' } as const;

/** An error answer of Microsoft Graph: status plus `error.code` and `error.message` of its JSON body. */
export class GraphApiError extends Error {
  override readonly name = 'GraphApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`HTTP ${status}${code ? ` ${code}` : ''}${detail ? `: ${detail}` : ''}`);
  }

  get isNotFound(): boolean {
    return this.status === 404 || this.code === 'itemNotFound';
  }
}

/** Reads `{ "error": { "code", "message" } }` (or a plain-text body). */
export async function apiErrorOf(response: Response): Promise<GraphApiError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    if (body.error && typeof body.error === 'object') return new GraphApiError(response.status, body.error.code ?? '', (body.error.message ?? '').slice(0, 300));
  } catch {
    // not JSON
  }
  return new GraphApiError(response.status, '', text.slice(0, 300));
}

const HINTS: Record<string, string> = {
  InvalidAuthenticationToken: 'the access token is invalid or expired and could not be renewed: re-authorize and update the OAUTH credential profile',
  accessDenied: 'the app may not do this: grant Files.ReadWrite (or Files.ReadWrite.All for another drive) and re-authorize',
  quotaLimitReached: 'the OneDrive storage quota is used up',
  insufficientStorage: 'the OneDrive storage quota is used up',
  activityLimitReached: 'Microsoft Graph is throttling this app; try again later',
  invalidRequest: 'the request was refused; names may not contain " * : < > ? / \\ | or end with a dot or space',
};

function codeOf(error: GraphApiError): AdapterErrorCode {
  if (error.isNotFound) return 'NOT_FOUND';
  if (error.status === 429 || error.status >= 500 || error.code === 'activityLimitReached') return error.status === 507 ? 'CONFIG' : 'TRANSIENT';
  if (error.status === 401 || error.status === 403) return 'AUTH';
  if (error.status === 400 || error.status === 409 || error.status === 413 || error.status === 416) return 'CONFIG';
  return 'TRANSIENT';
}

/** Maps an API, network or abort error to an AdapterError; `what` names the failed operation. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  if (error instanceof GraphApiError) {
    const hint = HINTS[error.code];
    return new AdapterError(ONEDRIVE_ORIGIN, codeOf(error), `${what}: ${error.message}${hint ? ` (${hint})` : ''}`, { cause: error });
  }
  const raw = error as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  if (raw?.name === 'AbortError' || raw?.name === 'TimeoutError') {
    return new AdapterError(ONEDRIVE_ORIGIN, raw.name === 'AbortError' ? 'ABORTED' : 'TRANSIENT', `${what}: ${raw.name === 'AbortError' ? 'aborted' : 'timed out'}`, { cause: error });
  }
  const cause = raw?.cause?.code ?? raw?.cause?.message ?? raw?.message ?? String(error);
  return new AdapterError(ONEDRIVE_ORIGIN, 'TRANSIENT', `${what}: cannot reach OneDrive (${cause})`, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(ONEDRIVE_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string, cause?: unknown): AdapterError {
  return new AdapterError(ONEDRIVE_ORIGIN, 'ABORTED', `${what} was aborted`, { cause });
}
