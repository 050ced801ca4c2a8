import { afterAll } from 'vitest';
import { FakeGraph } from './fake/graph-fake.js';

let counter = 0;

/** One fake per test file, started on first use and closed after the file. */
export function useFakeGraph(options: ConstructorParameters<typeof FakeGraph>[0] = {}) {
  const fake = new FakeGraph(options);
  let started: Promise<FakeGraph> | undefined;
  afterAll(async () => {
    if (started) await (await started).close();
  });
  return {
    fake,
    ready: () => (started ??= fake.start()),
    config: async (extra: Record<string, unknown> = {}) => {
      await (started ??= fake.start());
      counter += 1;
      return { folderPath: `Holdfast/test ${counter}`, apiBaseUrl: `${fake.url}/v1.0`, authBaseUrl: fake.url, fragmentSizeKiB: 1280, ...extra };
    },
    /** The OAUTH profile as the fake knows it now (its refresh token rotates with every grant). */
    profile: (extra: Record<string, unknown> = {}) => ({ type: 'OAUTH', clientId: fake.clientId, clientSecret: fake.clientSecret, refreshToken: fake.refreshToken, ...extra }),
  };
}

/**
 * A credential store like the host's: one profile object every instance reads, updated by `updateCredentials`. The
 * fake revokes a refresh token once it rotated, so later instances only work if the write-back happened.
 */
export function storedProfile(initial: Record<string, unknown>) {
  const profile: Record<string, unknown> = { ...initial };
  const updates: Record<string, unknown>[] = [];
  return {
    profile,
    updates,
    context: {
      credentials: { primary: profile },
      updateCredentials: async (_role: string, patch: Record<string, unknown>) => {
        updates.push(patch);
        Object.assign(profile, patch);
      },
    },
  };
}
