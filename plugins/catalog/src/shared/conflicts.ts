import { ConflictError } from '@holdfast/kernel';

/** True for a unique-constraint violation of either dialect, as MikroORM or the driver reports it. */
export function isUniqueViolation(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  const code = (error as { code?: unknown } | null)?.code;
  const message = String((error as { message?: unknown } | null)?.message ?? '');
  return (
    name === 'UniqueConstraintViolationException' ||
    code === '23505' ||
    /UNIQUE constraint failed|duplicate key value/i.test(message)
  );
}

/** Runs a write and turns a unique-constraint violation (a race past the pre-check) into a 409. */
export async function withUniqueName<T>(label: string, name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isUniqueViolation(error)) throw new ConflictError(`${label} named "${name}" already exists`);
    throw error;
  }
}

/** 409 for a delete blocked by jobs (and other records) that still use the record. */
export function inUse(label: string, jobs: Array<{ id: string; name: string }>, others?: Record<string, unknown>): ConflictError {
  const names = jobs.map((job) => job.name).join(', ');
  const suffix = jobs.length > 0 ? `: used by job(s) ${names}` : '';
  return new ConflictError(`${label} is still in use${suffix}`, { jobs, ...others });
}
