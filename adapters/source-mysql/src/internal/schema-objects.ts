import { adminQuery, type AdminTarget } from './admin-sql.js';
import { quoteIdentifier } from './connection.js';

/** A view, trigger, routine or event: what RENAME TABLE cannot move into another database, so it is recreated. */
export interface SchemaObject {
  kind: 'view' | 'trigger' | 'procedure' | 'function' | 'event';
  name: string;
  /** `SHOW CREATE` text, read in its own database so names in it are not qualified with the staging name. */
  create: string;
  sqlMode: string;
  timeZone?: string;
  /** The client character set and connection collation it was defined under (the server stores them with it). */
  characterSetClient?: string;
  collationConnection?: string;
}

/** Quotes a string literal (the server's default escaping: backslashes are escapes). */
export function quoteLiteral(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** Position of the columns of each `SHOW CREATE` answer: [create, sql_mode, time_zone, character_set_client]
 * (collation_connection follows character_set_client). */
const COLUMNS: Record<SchemaObject['kind'], [number, number | undefined, number | undefined, number]> = {
  view: [1, undefined, undefined, 2],
  trigger: [2, 1, undefined, 3],
  procedure: [2, 1, undefined, 3],
  function: [2, 1, undefined, 3],
  event: [3, 1, 2, 4],
};

/** What one schema holds, as the swap needs it. */
export interface SchemaContents {
  exists: boolean;
  charset: string;
  collation: string;
  /** Base tables and sequences: what RENAME TABLE moves between schemas. */
  tables: string[];
  objects: SchemaObject[];
}

/**
 * The contents of each schema of `databases`, in two round trips whatever their number (each costs an SSH login in SSH
 * mode): one for the names, one for every definition, each `SHOW CREATE` read in its own schema so the names in it
 * are not qualified with the staging name.
 */
export async function readSchemas(target: AdminTarget, databases: readonly string[]): Promise<Map<string, SchemaContents>> {
  const schemas = databases.map(quoteLiteral).join(', ');
  const names = await adminQuery(target, [
    `SELECT SCHEMA_NAME, 'schema', concat(DEFAULT_CHARACTER_SET_NAME, ' ', DEFAULT_COLLATION_NAME) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN (${schemas})
     UNION ALL SELECT TABLE_SCHEMA, 'table', TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN (${schemas}) AND TABLE_TYPE <> 'VIEW'
     UNION ALL SELECT TABLE_SCHEMA, 'view', TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA IN (${schemas})
     UNION ALL SELECT * FROM (SELECT TRIGGER_SCHEMA, 'trigger', TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA IN (${schemas})
       ORDER BY EVENT_OBJECT_TABLE, ACTION_ORDER LIMIT 18446744073709551615) AS in_firing_order
     UNION ALL SELECT ROUTINE_SCHEMA, lower(ROUTINE_TYPE), ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA IN (${schemas})
     UNION ALL SELECT EVENT_SCHEMA, 'event', EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA IN (${schemas})`,
  ]);
  const contents = new Map(databases.map((name) => [name, { exists: false, charset: '', collation: '', tables: [] as string[], objects: [] as SchemaObject[] }]));
  const definitions: [string, SchemaObject['kind'], string][] = [];
  for (const [schema, kind, name] of names as [string, string, string][]) {
    const entry = contents.get(schema)!;
    if (kind === 'schema') [entry.exists, entry.charset, entry.collation] = [true, ...(name.split(' ') as [string, string])];
    else if (kind === 'table') entry.tables.push(name);
    else definitions.push([schema, kind as SchemaObject['kind'], name]);
  }
  if (definitions.length === 0) return contents;
  // Each SHOW CREATE answers exactly one row, in order.
  const statements = definitions.flatMap(([schema, kind, name], index) => [
    ...(index === 0 || definitions[index - 1]![0] !== schema ? [`USE ${quoteIdentifier(schema)}`] : []),
    `SHOW CREATE ${kind.toUpperCase()} ${quoteIdentifier(name)}`,
  ]);
  const rows = await adminQuery(target, statements);
  for (const [index, [schema, kind, name]] of definitions.entries()) {
    const row = rows[index];
    const [create, mode, zone, charset] = COLUMNS[kind];
    if (!row?.[create]) throw new Error(`the definition of the ${kind} "${name}" cannot be read (the account needs SHOW VIEW, TRIGGER, EVENT and routine access)`);
    const [characterSetClient, collationConnection] = [row[charset], row[charset + 1]];
    contents.get(schema)!.objects.push({
      kind,
      name,
      create: row[create],
      sqlMode: mode === undefined ? '' : row[mode]!,
      ...(zone === undefined ? {} : { timeZone: row[zone]! }),
      ...(characterSetClient && collationConnection ? { characterSetClient, collationConnection } : {}),
    });
  }
  return contents;
}

/** The statement that drops `object` from `database`. */
export function dropStatement(database: string, object: SchemaObject): string {
  return `DROP ${object.kind.toUpperCase()} IF EXISTS ${quoteIdentifier(database)}.${quoteIdentifier(object.name)}`;
}

/**
 * Creates `objects` in `database`, each with the sql_mode (and time zone) it was defined with. A view may use
 * another view, so what fails is tried again while each round creates something; answers what could not be made.
 */
export async function createObjects(target: AdminTarget, database: string, objects: readonly SchemaObject[]): Promise<string[]> {
  if (objects.length === 0) return [];
  // Views first (in the order that works), then the rest; all in one round trip when nothing fails, which is the rule.
  const ordered = [...objects].sort((a, b) => Number(b.kind === 'view') - Number(a.kind === 'view'));
  const all = ordered.flatMap((object) => [...settingsOf(object), object.create]);
  if (await adminQuery(target, all, database).then(() => true, () => false)) return [];
  // Something failed: what the batch made before it exists now, so each object is retried alone, skipping those.
  const made = new Set((await readSchemas(target, [database])).get(database)!.objects.map((object) => `${object.kind} ${object.name}`));
  let pending = ordered.filter((object) => !made.has(`${object.kind} ${object.name}`));
  let failures: string[] = [];
  while (pending.length > 0) {
    const failed: SchemaObject[] = [];
    failures = [];
    for (const object of pending) {
      await adminQuery(target, [...settingsOf(object), object.create], database).catch((error: unknown) => {
        failed.push(object);
        failures.push(`the ${object.kind} "${object.name}": ${(error as Error).message}`);
      });
    }
    if (failed.length === pending.length) break;
    pending = failed;
  }
  return pending.length > 0 ? failures : [];
}

/**
 * The session settings an object was defined under: its sql_mode and time zone (not for views: SHOW CREATE VIEW
 * gives neither), and for every kind the client character set and connection collation, which the server stores
 * with the object (mariadb-dump restores them the same way). Without them a restored object took the restoring
 * connection's (found by the container image test: a view made by a utf8mb3 client came back as utf8mb4).
 */
function settingsOf(object: SchemaObject): string[] {
  return [
    ...(object.kind === 'view' ? [] : [`SET SESSION sql_mode = ${quoteLiteral(object.sqlMode)}`]),
    ...(object.timeZone ? [`SET SESSION time_zone = ${quoteLiteral(object.timeZone)}`] : []),
    ...(object.characterSetClient && object.collationConnection
      ? [`SET SESSION character_set_client = ${quoteLiteral(object.characterSetClient)}, collation_connection = ${quoteLiteral(object.collationConnection)}`]
      : []),
  ];
}
