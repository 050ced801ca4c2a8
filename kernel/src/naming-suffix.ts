/** Options for {@link pickFreeName} and {@link pickFreeNameAsync}. */
export interface FreeNameOptions {
  /** Extension kept after the suffix (`.sql.gz.enc`); detected from the name when omitted. */
  extension?: string;
  /** Highest suffix tried before giving up (default 1000). */
  maxAttempts?: number;
}

// An extension segment is short and alphanumeric (`.sql`, `.gz`, `.enc`, `.tar`); a dot followed by anything else
// (a job name like `my.app_2026-01-01`) belongs to the stem, so the suffix never lands inside a user's name.
const EXTENSION_SEGMENT = /\.[A-Za-z0-9]{1,8}$/;

/** Splits `name.sql.gz.enc` into `name` and `.sql.gz.enc`: the trailing run of short alphanumeric segments. */
export function splitExtension(fileName: string): { stem: string; extension: string } {
  let stem = fileName;
  let extension = '';
  for (;;) {
    const match = EXTENSION_SEGMENT.exec(stem);
    // Keep at least one character of stem, so `.gz` alone is a stem, not an extension.
    if (!match || match.index === 0) break;
    extension = match[0] + extension;
    stem = stem.slice(0, match.index);
  }
  return { stem, extension };
}

/** The names tried in order: `name.ext`, `name-1.ext`, `name-2.ext`, ... */
export function* freeNameCandidates(fileName: string, options: FreeNameOptions = {}): Generator<string> {
  const { stem, extension } = splitName(fileName, options.extension);
  const maxAttempts = options.maxAttempts ?? 1000;
  yield fileName;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) yield `${stem}-${attempt}${extension}`;
}

/**
 * Returns `fileName` if `exists` says it is free, else the first free `name-N.ext`. Pure: all I/O is the
 * caller's predicate. Throws when every candidate up to `maxAttempts` is taken.
 */
export function pickFreeName(fileName: string, exists: (candidate: string) => boolean, options?: FreeNameOptions): string {
  for (const candidate of freeNameCandidates(fileName, options)) {
    if (!exists(candidate)) return candidate;
  }
  throw exhausted(fileName, options);
}

/** {@link pickFreeName} with an asynchronous predicate (for example a storage `stat`); checks one name at a time. */
export async function pickFreeNameAsync(
  fileName: string,
  exists: (candidate: string) => Promise<boolean>,
  options?: FreeNameOptions & { signal?: AbortSignal },
): Promise<string> {
  for (const candidate of freeNameCandidates(fileName, options)) {
    options?.signal?.throwIfAborted();
    if (!(await exists(candidate))) return candidate;
  }
  throw exhausted(fileName, options);
}

function splitName(fileName: string, extension: string | undefined): { stem: string; extension: string } {
  if (extension === undefined) return splitExtension(fileName);
  if (extension !== '' && fileName.endsWith(extension) && fileName.length > extension.length) {
    return { stem: fileName.slice(0, -extension.length), extension };
  }
  if (extension === '') return { stem: fileName, extension: '' };
  throw new Error(`File name "${fileName}" does not end with the extension "${extension}"`);
}

function exhausted(fileName: string, options: FreeNameOptions | undefined): Error {
  return new Error(
    `No free name for "${fileName}": it and ${options?.maxAttempts ?? 1000} suffixed variants already exist`,
  );
}
