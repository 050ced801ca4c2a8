import { AdapterError, isAdapterError, StagedDatabaseRestore, type StagedTarget } from '@holdfast/sdk';
import { adminQuery, type AdminTarget } from './admin-sql.js';
import { ORIGIN, quoteIdentifier } from './connection.js';
import { createObjects, dropStatement, quoteLiteral, readSchemas, type SchemaContents, type SchemaObject } from './schema-objects.js';

/** MySQL and MariaDB names hold at most 64 characters. */
const NAME_CHARACTERS = 64;

/** `<database><mark><id>`, the database part shortened so the whole fits in 64 characters. */
export function workName(database: string, mark: string, id: string): string {
  const suffix = `${mark}${id}`;
  return `${[...database].slice(0, NAME_CHARACTERS - suffix.length).join('')}${suffix}`;
}

/** A target restored into a staging schema. */
type Staged = StagedTarget;

/** What the swap learned of one target before moving anything. */
interface SwapPlan extends Staged {
  aside: string;
  isNew: boolean;
  restored: SchemaContents;
  old: SchemaContents;
  /** Old views renamed out of the way inside the target (a view cannot move to another schema). */
  oldViewsAside: Map<string, string>;
}

const list = (names: readonly string[]) => names.map((name) => `"${name}"`).join(', ');

/**
 * Makes a MySQL/MariaDB restore all or nothing where the server allows it (docs/security.md, "Atomic database
 * restores"). There is no RENAME DATABASE: each target is restored into a staging schema `<name>__holdfast_staging_<id>`
 * and, when every database of the backup went in, one RENAME TABLE statement moves the old tables into a set-aside
 * schema and the restored ones into the target, for all targets at once. Views, triggers, routines and events cannot
 * be moved between schemas: they are read from the staging schema and recreated in the target right after.
 */
export class StagedRestore extends StagedDatabaseRestore<Staged> {
  /** @param overwrite `RestoreOptions.overwrite`: false refuses a target that exists (when staged, and at the swap). */
  constructor(
    private readonly admin: AdminTarget,
    overwrite?: boolean,
  ) {
    super(ORIGIN, overwrite);
  }

  /**
   * Registers `target` and answers its staging schema. With `create`, the schema is made now (with the character set
   * of an existing target, which an in-place restore would have kept); a multi-database script creates its own.
   */
  async prepare(target: string, create: boolean): Promise<string> {
    this.refuseSecondInto(target);
    const staging = workName(target, '__holdfast_staging_', this.id);
    this.staged.push({ target, staging });
    const [existing] = await adminQuery(this.admin, [`SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ${quoteLiteral(target)}`]);
    if (existing) this.refuseReplacing([target]);
    if (create || existing) {
      const charset = existing ? ` CHARACTER SET ${existing[0]!} COLLATE ${existing[1]!}` : '';
      await adminQuery(this.admin, [`CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(staging)}${charset}`]);
    }
    return staging;
  }

  protected async commit(): Promise<void> {
    const schemas = await readSchemas(this.admin, this.staged.flatMap((entry) => [entry.target, entry.staging]));
    const plans = this.staged.map((entry) => this.plan(entry, schemas.get(entry.target)!, schemas.get(entry.staging)!));
    // What the swap itself just read: a target created since it was staged is not replaced without overwrite (a
    // target created after this read makes the swap's CREATE DATABASE fail).
    try {
      this.refuseReplacing(plans.filter((plan) => !plan.isNew).map((plan) => plan.target));
    } catch (error) {
      throw await this.discardAfter(error);
    }
    const createdTargets: string[] = [];
    const droppedTriggers: SwapPlan[] = [];
    try {
      for (const plan of plans) {
        if (plan.isNew) {
          const charset = plan.restored.exists ? ` CHARACTER SET ${plan.restored.charset} COLLATE ${plan.restored.collation}` : '';
          await adminQuery(this.admin, [`CREATE DATABASE ${quoteIdentifier(plan.target)}${charset}`]);
          createdTargets.push(plan.target);
        }
        // A table with triggers cannot change schema ("Trigger in wrong schema"): the staging copies go (they are
        // recreated from their definitions), and the target's are dropped just before the swap and put back if it fails.
        const triggers = (objects: SchemaObject[], schema: string) => objects.filter((object) => object.kind === 'trigger').map((object) => dropStatement(schema, object));
        droppedTriggers.push(plan);
        await this.run([
          ...(plan.old.tables.length > 0 ? [`CREATE DATABASE ${quoteIdentifier(plan.aside)}`] : []),
          ...triggers(plan.restored.objects, plan.staging),
          ...triggers(plan.old.objects, plan.target),
        ]);
      }
      const pairs = plans.flatMap((plan) => {
        const [t, s, a] = [quoteIdentifier(plan.target), quoteIdentifier(plan.staging), quoteIdentifier(plan.aside)];
        return [
          ...plan.old.tables.map((name) => `${t}.${quoteIdentifier(name)} TO ${a}.${quoteIdentifier(name)}`),
          ...[...plan.oldViewsAside].map(([name, aside]) => `${t}.${quoteIdentifier(name)} TO ${t}.${quoteIdentifier(aside)}`),
          ...plan.restored.tables.map((name) => `${s}.${quoteIdentifier(name)} TO ${t}.${quoteIdentifier(name)}`),
        ];
      });
      // The one atomic step: every table of every target changes at once, or none does.
      if (pairs.length > 0) await adminQuery(this.admin, [`RENAME TABLE ${pairs.join(', ')}`]);
    } catch (error) {
      const left: string[] = [];
      for (const plan of droppedTriggers) left.push(...(await createObjects(this.admin, plan.target, plan.old.objects.filter((object) => object.kind === 'trigger'))));
      for (const plan of plans) await this.run([`DROP DATABASE IF EXISTS ${quoteIdentifier(plan.aside)}`]).catch(() => undefined);
      for (const name of createdTargets) await this.run([`DROP DATABASE IF EXISTS ${quoteIdentifier(name)}`]).catch(() => undefined);
      const why = `the restored databases could not be swapped in: ${(error as Error).message}. ` +
        (left.length > 0 ? `The old tables are untouched, but these triggers could not be put back: ${left.join('; ')}` : 'The old databases are untouched.');
      throw await this.discardAfter(new AdapterError(ORIGIN, isAdapterError(error) ? error.code : 'TRANSIENT', why, { cause: error }));
    }
    const problems: string[] = [];
    for (const plan of plans) problems.push(...(await this.finish(plan)));
    this.staged.splice(0);
    if (problems.length > 0) {
      const kept = list(plans.map((plan) => plan.staging));
      throw new AdapterError(ORIGIN, 'TRANSIENT', `the tables of ${list(plans.map((plan) => plan.target))} were replaced, but some other objects could not be recreated: ${problems.join('; ')} (the staging schemas ${kept} keep the definitions of the views, routines and events; drop them when done)`);
    }
  }

  /** What the swap of one target moves, drops and recreates. */
  private plan(entry: Staged, old: SchemaContents, restored: SchemaContents): SwapPlan {
    const oldViews = old.objects.filter((object) => object.kind === 'view');
    return {
      ...entry,
      aside: workName(entry.target, '__holdfast_old_', this.id),
      isNew: !old.exists,
      restored,
      old,
      oldViewsAside: new Map(oldViews.map((view, index) => [view.name, `__holdfast_old_${this.id}_${index}`])),
    };
  }

  /** After the swap: drops the old tables, views, routines and events and recreates the restored ones. */
  private async finish(plan: SwapPlan): Promise<string[]> {
    const problems: string[] = [];
    const attempt = async (what: string, statements: string[]) => {
      await this.run(statements).catch((error: unknown) => problems.push(`${what}: ${(error as Error).message}`));
    };
    const t = quoteIdentifier(plan.target);
    const oldOthers = plan.old.objects.filter((object) => object.kind !== 'view' && object.kind !== 'trigger').map((object) => dropStatement(plan.target, object));
    const oldViews = [...plan.oldViewsAside.values()].map((aside) => `DROP VIEW IF EXISTS ${t}.${quoteIdentifier(aside)}`);
    await attempt(`dropping the old tables, views, routines and events of "${plan.target}"`, [
      'SET SESSION foreign_key_checks = 0',
      `DROP DATABASE IF EXISTS ${quoteIdentifier(plan.aside)}`,
      ...oldViews,
      ...oldOthers,
    ]);
    problems.push(...(await createObjects(this.admin, plan.target, plan.restored.objects)));
    if (problems.length === 0) await attempt(`dropping the staging schema "${plan.staging}"`, [`DROP DATABASE IF EXISTS ${quoteIdentifier(plan.staging)}`]);
    return problems;
  }

  /** Drops the staging schemas made so far; answers `error`, with a note when one could not be dropped. */
  protected async discardAfter(error: unknown): Promise<unknown> {
    const left: string[] = [];
    for (const { staging } of this.staged.splice(0)) {
      await this.run([`DROP DATABASE IF EXISTS ${quoteIdentifier(staging)}`]).catch(() => left.push(staging));
    }
    if (left.length === 0 || !(error instanceof Error)) return error;
    const message = error.message.replace(/^\[source-mysql\] /, '');
    return new AdapterError(ORIGIN, isAdapterError(error) ? error.code : 'TRANSIENT', `${message} (the staging schema${left.length > 1 ? 's' : ''} ${list(left)} could not be dropped: drop by hand)`, { cause: error });
  }

  private async run(statements: string[]): Promise<void> {
    if (statements.length > 0) await adminQuery(this.admin, statements);
  }
}
