import type { OrmDatabase } from '@holdfast/orm-port';
import { ConflictError, ValidationError, type EventBus } from '@holdfast/kernel';
import { z } from 'zod';
import { UserEntity, type User } from '../entities/user.js';
import { MIN_PASSWORD_LENGTH } from './passwords.js';
import { UserService } from './user-service.js';

/** Input of {@link createFirstAdmin}. */
export interface FirstAdminInput {
  email: string;
  password: string;
  /** Display name; defaults to the part of the email before `@`. */
  name?: string;
}

const firstAdminSchema = z.object({
  email: z.email('not a valid email address'),
  password: z.string().min(MIN_PASSWORD_LENGTH, `must have at least ${MIN_PASSWORD_LENGTH} characters`),
  name: z.string().trim().min(1).max(200).optional(),
});

// One setup at a time in this process; PostgreSQL additionally takes a transaction-level advisory lock so two
// server processes cannot both create a "first" administrator.
let queue: Promise<unknown> = Promise.resolve();
const SETUP_LOCK_KEY = 4_242_001;

/**
 * Creates the first super administrator. Refuses with 409 when any user exists, so it is safe to call from the
 * setup endpoint, from plugin start (`HOLDFAST_ADMIN_EMAIL`/`HOLDFAST_ADMIN_PASSWORD`) and from the CLI
 * (`holdfast admin create`). Bad input is a 400 naming the field.
 */
export async function createFirstAdmin(database: OrmDatabase, input: FirstAdminInput, events?: EventBus): Promise<User> {
  const parsed = firstAdminSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
    throw new ValidationError(`Invalid administrator: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }
  const { email, password } = parsed.data;
  const name = parsed.data.name ?? email.split('@')[0]!;
  const run = queue.then(() =>
    database.em().transactional(async (em) => {
      if (database.dialect === 'postgresql') {
        await em.getConnection().execute(`select pg_advisory_xact_lock(${SETUP_LOCK_KEY})`);
      }
      const users = new UserService(database, events);
      if ((await em.count(UserEntity, {})) > 0) throw new ConflictError('Setup is already complete: a user exists');
      return users.create({ name, email, password, isSuperAdmin: true }, em);
    }),
  );
  queue = run.catch(() => undefined);
  return run;
}
