import { AdapterError, maskSecrets, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const AZURE_ORIGIN = { kind: 'storage', id: 'azure-blob' } as const;

/** What a storage REST error looks like (`RestError` of @azure/core-rest-pipeline). */
interface RawError {
  name?: string;
  code?: unknown;
  statusCode?: number;
  message?: string;
  details?: { errorCode?: string };
}

/** Removes secrets that could appear in a library message: the account key, and SAS signatures in URLs. */
export function redact(message: string, secrets: readonly (string | undefined)[]): string {
  return maskSecrets(message, secrets).replace(/([?&;]sig=)[^&;\s"']+/gi, '$1***').replace(/(AccountKey=)[^;\s"']+/gi, '$1***').replace(/(SharedAccessSignature=)[^;\s"']+/gi, '$1***');
}

/** The service's error code (`BlobNotFound`, `ContainerNotFound`, `AuthenticationFailed`...), when it sent one. */
export function serviceCode(error: unknown): string | undefined {
  const raw = error as RawError | null;
  const code = raw?.details?.errorCode ?? raw?.code;
  return typeof code === 'string' ? code : undefined;
}

function codeOf(raw: RawError | null): AdapterErrorCode {
  if (raw?.name === 'AbortError' || raw?.code === 'ABORT_ERR') return 'ABORTED';
  const status = raw?.statusCode;
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 404) return 'NOT_FOUND';
  if (status === 400 || status === 409 || status === 412 || status === 413 || status === 416) return 'CONFIG';
  // Network errors (unresolvable names included: DNS can fail briefly), 5xx and 429 may pass on a retry.
  return 'TRANSIENT';
}

/** A readable reason: the service error code first (stable), then the library's text without secrets. */
function reasonOf(raw: RawError | null, service: string | undefined, error: unknown, secrets: readonly (string | undefined)[]): string {
  // Storage messages carry a request id and time on extra lines; the first line is what a person needs.
  const text = (raw?.message ?? String(error)).split('\n')[0]?.trim() ?? '';
  if (service === 'ContainerNotFound') return 'the container does not exist (create it first; Holdfast never creates containers)';
  if (raw?.statusCode === 401 || raw?.statusCode === 403) {
    // AuthenticationFailed (real Azure) and AuthorizationFailure (Azurite, and Azure for firewall/SAS scope) alike.
    return `access denied (${service ?? raw.statusCode}): ${redact(text, secrets)} Check the account key or SAS token, its permissions and the account firewall.`;
  }
  if (service === 'ENOTFOUND') return `the host name does not resolve (${redact(text, secrets)})`;
  const prefix = service && !text.includes(service) ? `${service}: ` : '';
  return redact(`${prefix}${text}`, secrets);
}

/**
 * Maps an Azure SDK / socket error to an AdapterError with a stable code; `what` names the failed operation. The
 * SDK error is not kept as `cause`: its request record holds URLs that may carry a SAS signature.
 */
export function toAdapterError(error: unknown, what: string, secrets: readonly (string | undefined)[] = []): AdapterError {
  if (error instanceof AdapterError) return error;
  const raw = error as RawError | null;
  const service = serviceCode(error);
  return new AdapterError(AZURE_ORIGIN, codeOf(raw), `${what}: ${reasonOf(raw, service, error, secrets)}`);
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(AZURE_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string): AdapterError {
  return new AdapterError(AZURE_ORIGIN, 'ABORTED', `${what} was aborted`);
}
