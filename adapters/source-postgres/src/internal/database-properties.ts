import { adminQuery, type AdminTarget } from './admin-sql.js';
import { quoteIdentifier } from './connection.js';
import { quoteLiteral } from './remote-query.js';

/** What a staged restore keeps of the database it replaces (pg_restore without --create restores none of it). */
export interface DatabaseFacts {
  name: string;
  /** The restoring role may rename and drop it (owner or member of its owner role, with CREATEDB; or superuser). */
  canReplace: boolean;
  /** `CREATE DATABASE` options giving the staging database the same encoding, locale, owner, tablespace and limit. */
  createOptions: string;
  comment: string;
  /** Null ACL: the default privileges, which a new database has anyway. */
  hasDefaultAcl: boolean;
}

const GUC_NAME = /^[A-Za-z_][A-Za-z0-9_.]*$/;

/** The facts of `name`, or undefined when no such database exists. */
export async function describeDatabase(target: AdminTarget, name: string): Promise<DatabaseFacts | undefined> {
  // to_jsonb reads the locale provider columns, which differ between versions (15-16: daticulocale, 17: datlocale).
  const [row] = await adminQuery(
    target,
    target.config.maintenanceDatabase,
    `SELECT (SELECT rolsuper OR (rolcreatedb AND pg_has_role(current_user, d.datdba, 'USAGE')) FROM pg_roles WHERE rolname = current_user)::text,
       pg_get_userbyid(d.datdba), pg_encoding_to_char(d.encoding), d.datcollate, d.datctype, d.datconnlimit::text,
       coalesce(to_jsonb(d) ->> 'datlocprovider', ''), coalesce(to_jsonb(d) ->> 'datlocale', to_jsonb(d) ->> 'daticulocale', ''),
       coalesce(t.spcname, ''), coalesce(shobj_description(d.oid, 'pg_database'), ''), (d.datacl IS NULL)::text
     FROM pg_database d LEFT JOIN pg_tablespace t ON t.oid = d.dattablespace WHERE d.datname = ${quoteLiteral(name)}`,
  );
  if (!row) return undefined;
  const [canReplace, owner, encoding, collate, ctype, limit, provider, locale, tablespace, comment, hasDefaultAcl] = row as [string, ...string[]];
  const options = [` TEMPLATE template0 OWNER ${quoteIdentifier(owner!)} ENCODING ${quoteLiteral(encoding!)}`, ` LC_COLLATE ${quoteLiteral(collate!)} LC_CTYPE ${quoteLiteral(ctype!)}`];
  if (provider === 'i') options.push(` LOCALE_PROVIDER icu ICU_LOCALE ${quoteLiteral(locale!)}`);
  if (provider === 'b') options.push(` LOCALE_PROVIDER builtin BUILTIN_LOCALE ${quoteLiteral(locale!)}`);
  if (tablespace && tablespace !== 'pg_default') options.push(` TABLESPACE ${quoteIdentifier(tablespace)}`);
  if (limit !== '-1') options.push(` CONNECTION LIMIT ${Number(limit)}`);
  return { name, canReplace: isTrue(canReplace), createOptions: options.join(''), comment: comment!, hasDefaultAcl: isTrue(hasDefaultAcl!) };
}

/**
 * Gives `staging` the comment, database privileges and per-database settings of the database it will replace. Each
 * that cannot be copied (a setting only a superuser may set...) becomes a warning of the restore, not a failure.
 */
export async function copyDatabaseProperties(target: AdminTarget, facts: DatabaseFacts, staging: string): Promise<string[]> {
  const admin = target.config.maintenanceDatabase;
  const warnings: string[] = [];
  const attempt = async (what: string, sql: string) => {
    await adminQuery(target, admin, sql).catch((error: unknown) => warnings.push(`${what} of "${facts.name}" was not carried over to the restored database: ${(error as Error).message}`));
  };
  const into = quoteIdentifier(staging);
  if (facts.comment) await attempt('the comment', `COMMENT ON DATABASE ${into} IS ${quoteLiteral(facts.comment)}`);
  if (!facts.hasDefaultAcl) {
    const grants = await adminQuery(
      target,
      admin,
      `SELECT a.privilege_type, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END, a.is_grantable::text
       FROM pg_database d, aclexplode(d.datacl) a WHERE d.datname = ${quoteLiteral(facts.name)}`,
    );
    const statements = [`REVOKE ALL ON DATABASE ${into} FROM PUBLIC`, ...grants.map(([privilege, grantee, grantable]) => `GRANT ${privilege!} ON DATABASE ${into} TO ${grantee!}${isTrue(grantable) ? ' WITH GRANT OPTION' : ''}`)];
    await attempt('the privileges', statements.join('; '));
  }
  const settings = await adminQuery(
    target,
    admin,
    `SELECT coalesce(r.rolname, ''), unnest(s.setconfig) FROM pg_db_role_setting s LEFT JOIN pg_roles r ON r.oid = s.setrole
     WHERE s.setdatabase = (SELECT oid FROM pg_database WHERE datname = ${quoteLiteral(facts.name)})`,
  );
  for (const [role, entry] of settings) {
    const at = entry!.indexOf('=');
    const name = entry!.slice(0, at);
    if (!GUC_NAME.test(name)) {
      warnings.push(`the setting "${name}" of "${facts.name}" was not carried over to the restored database: unusual name`);
      continue;
    }
    // set_config parses the stored text as SET would (list settings such as search_path included); FROM CURRENT
    // then stores exactly that, without re-quoting the value by hand.
    const alter = role ? `ALTER ROLE ${quoteIdentifier(role)} IN DATABASE ${into}` : `ALTER DATABASE ${into}`;
    await attempt(`the setting "${name}"`, `SELECT set_config(${quoteLiteral(name)}, ${quoteLiteral(entry!.slice(at + 1))}, false); ${alter} SET ${name} FROM CURRENT`);
  }
  return warnings;
}

function isTrue(text: string | undefined): boolean {
  return text === 'true' || text === 't';
}
