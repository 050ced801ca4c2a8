import { afterAll } from 'vitest';
import { FakeDrive, type FakeDriveOptions } from './fake/drive-fake.js';

let counter = 0;

/** One fake per test file, started on first use and closed after the file. */
export function useFakeDrive(options: FakeDriveOptions = {}) {
  const fake = new FakeDrive(options);
  let started: Promise<FakeDrive> | undefined;
  afterAll(async () => {
    if (started) await (await started).close();
  });
  return {
    fake,
    ready: () => (started ??= fake.start()),
    /** A config pointing at the fake, in a fresh folder (two levels, to exercise the folder walk). */
    config: async (extra: Record<string, unknown> = {}) => {
      await (started ??= fake.start());
      counter += 1;
      return { folderPath: `Holdfast/test ${counter}`, apiBaseUrl: fake.url, tokenUrl: `${fake.url}/token`, chunkSizeMiB: 1, ...extra };
    },
    profile: (extra: Record<string, unknown> = {}) => ({ type: 'OAUTH', clientId: fake.clientId, clientSecret: fake.clientSecret, refreshToken: fake.refreshToken, ...extra }),
  };
}
