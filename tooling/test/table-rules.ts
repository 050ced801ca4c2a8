// One owner per table, asserted on the queries (ARCHITECTURE.md section 3, docs/architecture.md "One owner per
// table"): the DDL test in apps/server sees only who creates and alters a table; this rule sees who queries it.
// Pure functions over source texts, like rules.ts; kept in their own file so each rule family stays small.

/** A source file of a package, relative to the package root, with its text. */
export interface PluginSource {
  plugin: string;
  file: string;
  text: string;
}

/** `const TABLE = 'download_tokens'`: a table name held in a constant, as several plugins write it. */
const CONSTANT = /\bconst\s+([A-Z][A-Z0-9_]*)\s*=\s*'([a-z][a-z0-9_]*)'/g;
/** `createTable('x'` or `createTable(TABLE`. */
const CREATE_TABLE = /\bcreateTable\(\s*(?:'([a-z][a-z0-9_]*)'|([A-Z][A-Z0-9_]*))/g;
/**
 * A knex table call: `knex()('x')`, `getKnex()('x')`, `this.knex()(TABLE)`, `trx('x')`-style calls are not counted
 * (a transaction handle is always named after the call it came from in this codebase: `knex`, `getKnex`).
 */
const TABLE_CALL = /\b(?:knex|getKnex)\(\)\(\s*(?:'([a-z][a-z0-9_]*)'|([A-Z][A-Z0-9_]*))\s*\)/g;

function constantsOf(text: string): Map<string, string> {
  return new Map([...text.matchAll(CONSTANT)].map((match) => [match[1]!, match[2]!]));
}

/** Which plugin's migrations create each table (the first one found; two creators are the DDL test's business). */
export function tableOwners(sources: readonly PluginSource[]): Map<string, string> {
  const owners = new Map<string, string>();
  for (const { plugin, text } of sources) {
    const constants = constantsOf(text);
    for (const match of text.matchAll(CREATE_TABLE)) {
      const table = match[1] ?? constants.get(match[2]!);
      if (table && !owners.has(table)) owners.set(table, plugin);
    }
  }
  return owners;
}

/** One query a plugin issues on a table another plugin owns. */
export interface ForeignTableQuery {
  plugin: string;
  file: string;
  line: number;
  table: string;
  owner: string;
}

/** Every knex table call in a plugin's source that names a table another plugin's migrations create. */
export function foreignTableQueries(sources: readonly PluginSource[]): ForeignTableQuery[] {
  const owners = tableOwners(sources);
  const found: ForeignTableQuery[] = [];
  for (const { plugin, file, text } of sources) {
    const constants = constantsOf(text);
    for (const match of text.matchAll(TABLE_CALL)) {
      const table = match[1] ?? constants.get(match[2]!);
      const owner = table ? owners.get(table) : undefined;
      if (!table || !owner || owner === plugin) continue;
      const line = text.slice(0, match.index).split('\n').length;
      found.push({ plugin, file, line, table, owner });
    }
  }
  return found;
}

/** The message of one foreign query: where, which table, and what to do instead. */
export function describeForeignQuery(query: ForeignTableQuery): string {
  return `${query.plugin} ${query.file}:${query.line} queries "${query.table}", a table of ${query.owner}; read it through a kernel port ${query.owner} provides (kernel/src/ports/)`;
}
