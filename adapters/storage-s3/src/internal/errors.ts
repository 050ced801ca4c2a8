import { AdapterError, maskSecrets, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const S3_ORIGIN = { kind: 'storage', id: 's3' } as const;

/** The parts of an AWS SDK v3 error (S3ServiceException, or a Node socket error) the mapping reads. */
interface SdkErrorShape {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  StorageClass?: string;
  $metadata?: { httpStatusCode?: number };
}

const CODE_BY_NAME: Record<string, AdapterErrorCode> = {
  NoSuchKey: 'NOT_FOUND',
  NotFound: 'NOT_FOUND',
  NoSuchBucket: 'NOT_FOUND',
  NoSuchUpload: 'NOT_FOUND',
  InvalidAccessKeyId: 'AUTH',
  SignatureDoesNotMatch: 'AUTH',
  AccessDenied: 'AUTH',
  Forbidden: 'AUTH',
  ExpiredToken: 'AUTH',
  InvalidToken: 'AUTH',
  AccountProblem: 'AUTH',
  AuthorizationHeaderMalformed: 'CONFIG',
  PermanentRedirect: 'CONFIG',
  InvalidBucketName: 'CONFIG',
  InvalidArgument: 'CONFIG',
  InvalidRange: 'CONFIG',
  InvalidStorageClass: 'CONFIG',
  InvalidObjectState: 'CONFIG',
  EntityTooLarge: 'CONFIG',
  EntityTooSmall: 'CONFIG',
  InvalidPart: 'TRANSIENT',
  BadDigest: 'TRANSIENT',
  SlowDown: 'TRANSIENT',
  RequestTimeout: 'TRANSIENT',
  InternalError: 'TRANSIENT',
  ServiceUnavailable: 'TRANSIENT',
  TimeoutError: 'TRANSIENT',
  AbortError: 'ABORTED',
  ABORT_ERR: 'ABORTED',
};

/** What each cause means for the operator; appended to the message so a failed check says what to fix. */
const HINTS: Record<string, string> = {
  InvalidAccessKeyId: 'the access key id is unknown to the server: check accessKeyId or the credential profile',
  SignatureDoesNotMatch: 'the secret access key is wrong: check secretAccessKey or the credential profile',
  AccessDenied: 'the credentials may not do this: grant s3:ListBucket, s3:GetObject, s3:PutObject, s3:DeleteObject, s3:AbortMultipartUpload and s3:ListBucketMultipartUploads on the bucket',
  Forbidden: 'the server refused the credentials (wrong key, or no permission on the bucket)',
  NoSuchBucket: 'the bucket does not exist: create it first, or check bucket, endpoint and region',
  AuthorizationHeaderMalformed: 'the region is wrong for this bucket: check region',
  PermanentRedirect: 'the bucket lives in another region or endpoint: check region and endpoint',
  ECONNREFUSED: 'nothing listens at the endpoint: check endpoint (host and port) and that the server runs',
  ENOTFOUND: 'the endpoint host name does not resolve: check endpoint',
  EAI_AGAIN: 'the endpoint host name could not be resolved right now (DNS)',
  ETIMEDOUT: 'the endpoint did not answer in time: check endpoint and the network',
  ECONNRESET: 'the connection was reset by the endpoint',
};

/** The S3 error code (or socket error code) of an SDK error. */
export function s3ErrorName(error: unknown): string | undefined {
  const raw = error as SdkErrorShape | null;
  if (!raw || typeof raw !== 'object') return undefined;
  if (typeof raw.code === 'string' && /^E[A-Z_]+$/.test(raw.code)) return raw.code;
  const name = raw.Code ?? raw.name;
  if (name === 'UnknownError' || name === 'Error' || name === undefined) {
    const status = raw.$metadata?.httpStatusCode;
    if (status === 403) return 'Forbidden';
    if (status === 404) return 'NotFound';
  }
  return name;
}

function codeOf(name: string | undefined, status: number | undefined): AdapterErrorCode {
  if (name && CODE_BY_NAME[name]) return CODE_BY_NAME[name];
  if (name && /^E[A-Z_]+$/.test(name)) return 'TRANSIENT';
  if (status === 401 || status === 403) return 'AUTH';
  if (status === 404) return 'NOT_FOUND';
  if (status === 400 || status === 405 || status === 411 || status === 416) return 'CONFIG';
  return 'TRANSIENT';
}

/** Removes every occurrence of the secrets from a text: a wrapped library message must never carry one. */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  return maskSecrets(text, secrets);
}

/**
 * Maps an AWS SDK / socket error to an AdapterError with a stable code; `what` names the failed operation. The
 * message keeps the server's own words (redacted) and adds what to do about the usual causes.
 */
export function toAdapterError(error: unknown, what: string, secrets: ReadonlyArray<string | undefined> = []): AdapterError {
  if (error instanceof AdapterError) return error;
  const raw = error as SdkErrorShape | null;
  const name = s3ErrorName(error);
  const status = raw?.$metadata?.httpStatusCode;
  const code = codeOf(name, status);
  const serverText = raw?.message && raw.message !== name && raw.message !== 'UnknownError' ? raw.message : '';
  const parts = [name ?? 'error', status ? `HTTP ${status}` : '', serverText].filter(Boolean).join(', ');
  const hint = name ? HINTS[name] : undefined;
  const message = redact(`${what}: ${parts}${hint ? ` (${hint})` : ''}`, secrets);
  return new AdapterError(S3_ORIGIN, code, message, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(S3_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string, cause?: unknown): AdapterError {
  return new AdapterError(S3_ORIGIN, 'ABORTED', `${what} was aborted`, { cause });
}
