import type { RunPlan } from '@holdfast/kernel';
import { disposeAll, type AdapterFactory } from '../../run/adapters.js';
import { messageOf } from '../../run/outcome.js';
import { readSidecar } from '../../run/sidecar.js';
import type { RecordedBase } from '../change-log-store.js';

/**
 * The databases a base backup holds, as its sidecar lists them (`databases`, the dump's own list), read from the
 * first destination of `destinations` that holds the base and answers; the change-log tables do not keep the list.
 * Throws, naming every destination tried, when none answers: a restore must not be queued for a database nobody
 * can confirm is in the base.
 */
export async function databasesOfBase(adapters: AdapterFactory, destinations: RunPlan['destinations'], base: RecordedBase): Promise<string[]> {
  const failures: string[] = [];
  for (const destination of destinations.filter((candidate) => base.destinations.includes(candidate.configId))) {
    const storage = adapters.storage(destination);
    try {
      const sidecar = await readSidecar(storage.adapter, base.storageKey);
      if (!sidecar) throw new Error('no .meta.json sidecar');
      if (!sidecar.databases) throw new Error('the sidecar lists no databases');
      return sidecar.databases;
    } catch (error) {
      failures.push(`${storage.name}: ${messageOf(error)}`);
    } finally {
      await disposeAll([storage.adapter]);
    }
  }
  throw new Error(`the databases of base backup ${base.storageKey} could not be read from its sidecar on any destination (${failures.join('; ') || 'none holds it'})`);
}
