import { TOKENS, type SystemTaskSchedules } from '@holdfast/kernel';
import type { Catalog } from '../catalog.js';

/** Observability's task schedules (`TOKENS.SystemTaskSchedules`), which the export and import carry; absent without it. */
export function systemTaskSchedules(catalog: Catalog): SystemTaskSchedules | undefined {
  const { container } = catalog.deps;
  return container.isRegistered(TOKENS.SystemTaskSchedules, true) ? container.resolve(TOKENS.SystemTaskSchedules) : undefined;
}
