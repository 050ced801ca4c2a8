import { afterAll } from 'vitest';
import { FakeDropbox } from './fake/dropbox-fake.js';

let counter = 0;

/** One fake per test file, started on first use and closed after the file. */
export function useFakeDropbox(options: ConstructorParameters<typeof FakeDropbox>[0] = {}) {
  const fake = new FakeDropbox(options);
  let started: Promise<FakeDropbox> | undefined;
  afterAll(async () => {
    if (started) await (await started).close();
  });
  return {
    fake,
    /** The started fake. */
    ready: () => (started ??= fake.start()),
    /** A config pointing every endpoint at the fake, under a fresh root folder. */
    config: async (extra: Record<string, unknown> = {}) => {
      await (started ??= fake.start());
      counter += 1;
      return { root: `/Holdfast Test ${counter}`, apiBaseUrl: fake.url, contentBaseUrl: fake.url, tokenUrl: `${fake.url}/oauth2/token`, chunkSizeMiB: 4, ...extra };
    },
    /** The OAUTH profile the fake accepts (no access token yet: the adapter must refresh first). */
    profile: (extra: Record<string, unknown> = {}) => ({ type: 'OAUTH', clientId: fake.clientId, clientSecret: fake.clientSecret, refreshToken: fake.refreshToken, ...extra }),
  };
}
