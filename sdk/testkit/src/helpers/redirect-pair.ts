import { Readable } from 'node:stream';
import type { StorageAdapter } from '@holdfast/sdk';
import { startHttpReceiver, type HttpReceiver, type RecordedRequest } from './http-endpoints.js';

/** The redirect statuses a client may meet. */
export type RedirectStatus = 301 | 302 | 303 | 307 | 308;

/**
 * Two hosts for the "no secret crosses hosts" test of an HTTP adapter: `first` (127.0.0.1, the configured server)
 * answers every request with a redirect to {@link REDIRECT_TARGET_PATH} on `second` (127.0.0.2, another party), which
 * records what reaches it. The target path is fixed: a secret in the configured URL's path (a webhook token) is the
 * first host's to give away, so only what the client itself sends along counts.
 */
export interface RedirectPair {
  /** Base URL of the first host, to configure the adapter with. */
  url: string;
  first: HttpReceiver;
  second: HttpReceiver;
  /** The `secrets` that reached the second host: in its URL, any header (Basic credentials decoded) or the body. */
  leaked(secrets: readonly string[]): string[];
  close(): Promise<void>;
}

function visibleText(request: RecordedRequest): string {
  const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') : value ?? ''}`);
  const basic = /^Basic\s+(\S+)/i.exec(String(request.headers.authorization ?? ''))?.[1];
  const decoded = basic ? Buffer.from(basic, 'base64').toString('utf8') : '';
  return [request.method, request.url, ...headers, decoded, request.body.toString('utf8')].join('\n');
}

/** Where the first host of a {@link RedirectPair} sends every request. */
export const REDIRECT_TARGET_PATH = '/redirected-here';

/** Starts a {@link RedirectPair} whose first host answers `status`. */
export async function startRedirectPair(status: RedirectStatus): Promise<RedirectPair> {
  const second = await startHttpReceiver(undefined, { host: '127.0.0.2' });
  const first = await startHttpReceiver();
  first.respondWith(() => ({ status, headers: { location: `${second.url}${REDIRECT_TARGET_PATH}` }, body: '' }));
  return {
    url: first.url,
    first,
    second,
    leaked: (secrets) => {
      const seen = second.requests.map(visibleText).join('\n');
      return secrets.filter((secret) => secret !== '' && seen.includes(secret));
    },
    close: async () => {
      await Promise.all([first.close(), second.close()]);
    },
  };
}

/** What one redirect status did in {@link secretsAcrossRedirects}. */
export interface RedirectProbe {
  status: RedirectStatus;
  /** Requests the configured (first) host got: at least one, or the probe proved nothing. */
  firstRequests: number;
  /** Requests that reached the other host. */
  secondRequests: number;
  /** Secrets found in what reached the other host; must be empty. */
  leaked: string[];
}

/**
 * Runs `operations` (the adapter's calls, aimed at `baseUrl`) once per redirect status and reports what reached the
 * other host. The operations are expected to fail (the other host answers `{}`), so their errors are ignored.
 */
export async function secretsAcrossRedirects(
  secrets: readonly string[],
  operations: (baseUrl: string) => Promise<unknown>,
  statuses: readonly RedirectStatus[] = [302, 307],
): Promise<RedirectProbe[]> {
  const probes: RedirectProbe[] = [];
  for (const status of statuses) {
    const pair = await startRedirectPair(status);
    try {
      await operations(pair.url).catch(() => undefined);
      probes.push({ status, firstRequests: pair.first.requests.length, secondRequests: pair.second.requests.length, leaked: pair.leaked(secrets) });
    } finally {
      await pair.close();
    }
  }
  return probes;
}

/**
 * Every kind of request a storage adapter makes (check, put, get, stat, list, delete), each allowed to fail: for a
 * {@link secretsAcrossRedirects} probe, which only asks where the credentials went.
 */
export async function exerciseStorage(storage: StorageAdapter): Promise<void> {
  const key = 'redirect-probe/object.bin';
  const payload = Buffer.from('redirect probe payload');
  const steps: Array<() => Promise<unknown>> = [
    () => storage.check(),
    () => storage.put(key, Readable.from([payload]), { size: payload.length }),
    async () => (await storage.get(key)).resume(),
    () => storage.stat(key),
    async () => {
      for await (const entry of storage.list('redirect-probe/')) void entry;
    },
    () => storage.delete(key),
  ];
  try {
    for (const step of steps) await step().catch(() => undefined);
  } finally {
    await storage.dispose?.().catch(() => undefined);
  }
}
