// The dependency rules of ARCHITECTURE.md section 1 as pure functions: each returns one message per violation,
// naming the package and the offending dependency, so the test output says exactly what to fix.
import { posix } from 'node:path';
import { isNodeBuiltin, packageOfSpecifier, type Manifest, type WorkspacePackage } from './workspace.js';

/** Runtime dependency fields: what a consumer of the package installs. */
const RUNTIME_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'] as const;
const ALL_FIELDS = [...RUNTIME_FIELDS, 'devDependencies'] as const;

type DependencyField = (typeof ALL_FIELDS)[number];

function entries(manifest: Manifest, fields: readonly DependencyField[]): Array<[DependencyField, string, string]> {
  return fields.flatMap((field) =>
    Object.entries(manifest[field] ?? {}).map(([name, range]) => [field, name, range] as [DependencyField, string, string]),
  );
}

/** Folder prefix of adapter packages by kind (`notification` adapters are `notify-*`). */
export const ADAPTER_FOLDER_PREFIX: Readonly<Record<string, string>> = {
  source: 'source-',
  storage: 'storage-',
  notification: 'notify-',
  retention: 'retention-',
  naming: 'naming-',
};

const KEBAB_ID = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** The kernel imports no web framework, no ORM and nothing of ours; shared tooling may be a dev dependency. */
export function kernelViolations(kernel: WorkspacePackage): string[] {
  const problems: string[] = [];
  for (const [field, dep] of entries(kernel.manifest, ALL_FIELDS)) {
    const isFramework = dep === 'koa' || dep.startsWith('koa-') || dep.startsWith('@koa/') || dep.startsWith('@mikro-orm/');
    const isOurs = dep.startsWith('@holdfast/') && !(field === 'devDependencies' && dep === '@holdfast/tooling');
    if (isFramework || isOurs) problems.push(`${kernel.name} must not depend on ${dep} (found in ${field})`);
  }
  const allowed = new Set(entries(kernel.manifest, RUNTIME_FIELDS).map(([, name]) => name));
  for (const { file, specifier } of kernel.imports) {
    const pkg = packageOfSpecifier(specifier);
    if (pkg && !isNodeBuiltin(specifier) && !allowed.has(pkg)) {
      problems.push(`${kernel.name} ${file} imports ${specifier}, which is not one of its dependencies`);
    }
  }
  return problems;
}

/** What ARCHITECTURE.md section 1 and the adapter layout rules ask of every package under `adapters/`. */
export function adapterViolations(adapter: WorkspacePackage): string[] {
  const problems: string[] = [];
  const { name, manifest } = adapter;
  const folder = adapter.dir.split('/').pop() ?? adapter.dir;
  const block = manifest.holdfast;
  if (!block || typeof block !== 'object') {
    problems.push(`${name} has no "holdfast": { "kind", "id" } block in package.json`);
  } else {
    const prefix = typeof block.kind === 'string' ? ADAPTER_FOLDER_PREFIX[block.kind] : undefined;
    if (!prefix) problems.push(`${name} declares unknown holdfast kind "${String(block.kind)}"`);
    else if (!folder.startsWith(prefix)) {
      problems.push(`${name} is a ${String(block.kind)} adapter, so its folder must start with "${prefix}" (is "${folder}")`);
    }
    if (typeof block.id !== 'string' || !KEBAB_ID.test(block.id)) {
      problems.push(`${name} declares holdfast id "${String(block.id)}", which is not kebab-case`);
    } else if (prefix && folder.startsWith(prefix)) {
      // One name per adapter: folder, npm name and HOLDFAST_ADAPTERS_INCLUDE entry are all `<prefix><id>`.
      const oneName = `${prefix}${block.id}`;
      if (folder !== oneName) problems.push(`${name} has id "${block.id}", so its folder must be "${oneName}" (is "${folder}")`);
      else if (name !== `@holdfast/${oneName}`) problems.push(`${name} must be named @holdfast/${oneName}`);
    }
  }
  const sdkPeer = manifest.peerDependencies?.['@holdfast/sdk'];
  if (sdkPeer === undefined) problems.push(`${name} must list @holdfast/sdk in peerDependencies`);
  else if (!/^\^0\.\d+\.\d+/.test(sdkPeer)) {
    problems.push(`${name} must depend on @holdfast/sdk with a "^0.x" range (has "${sdkPeer}")`);
  }
  for (const [field, dep] of entries(manifest, ALL_FIELDS)) {
    if (!dep.startsWith('@holdfast/')) continue;
    if (dep === '@holdfast/sdk' && field === 'peerDependencies') continue;
    if (field === 'devDependencies' && ['@holdfast/testkit', '@holdfast/sdk', '@holdfast/tooling'].includes(dep)) continue;
    problems.push(`${name} must not depend on ${dep} (found in ${field}); adapters reach Holdfast only through @holdfast/sdk`);
  }
  // Contracts, z, injectable and inject come from the sdk, so one copy of each is shared with the kernel.
  const throughSdkOnly = new Set(['zod', 'tsyringe', '@holdfast/kernel']);
  const allowed = new Set(entries(manifest, RUNTIME_FIELDS).map(([, dep]) => dep));
  for (const { file, specifier } of adapter.imports) {
    const pkg = packageOfSpecifier(specifier);
    if (!pkg || isNodeBuiltin(specifier) || pkg === '@holdfast/sdk') continue;
    if (throughSdkOnly.has(pkg)) {
      problems.push(`${name} ${file} imports ${specifier} directly; import it from @holdfast/sdk`);
    } else if (!allowed.has(pkg) || pkg.startsWith('@holdfast/')) {
      problems.push(`${name} ${file} imports ${specifier}, which is not one of its own dependencies`);
    }
  }
  return problems;
}

/** A plugin reaches another plugin only through kernel tokens: no dependency on it, no import of it. */
export function pluginViolations(plugin: WorkspacePackage, allPlugins: readonly WorkspacePackage[]): string[] {
  const others = new Set(allPlugins.filter((p) => p.name !== plugin.name).map((p) => p.name));
  const problems: string[] = [];
  for (const [field, dep] of entries(plugin.manifest, RUNTIME_FIELDS)) {
    if (others.has(dep)) problems.push(`${plugin.name} must not depend on plugin ${dep} (found in ${field}); use a kernel token`);
  }
  for (const { file, specifier } of plugin.imports) {
    const pkg = packageOfSpecifier(specifier);
    if (pkg && others.has(pkg)) problems.push(`${plugin.name} ${file} imports plugin ${specifier}; use a kernel token`);
  }
  return problems;
}

/** Every package has a README.md and a 0.x version until the first stable release. */
export function packageHygieneViolations(pkg: WorkspacePackage): string[] {
  const problems: string[] = [];
  if (!pkg.hasReadme) problems.push(`${pkg.name} (${pkg.dir}) has no README.md`);
  if (!/^0\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(pkg.manifest.version ?? '')) {
    problems.push(`${pkg.name} has version "${String(pkg.manifest.version)}"; packages stay on 0.x`);
  }
  return problems;
}

/** A relative import must stay inside its own package: reaching into another package's files skips its API. */
export function escapingImportViolations(pkg: WorkspacePackage): string[] {
  const problems: string[] = [];
  for (const { file, specifier } of pkg.imports) {
    if (!specifier.startsWith('.')) continue;
    const target = posix.normalize(posix.join(pkg.dir, posix.dirname(file), specifier));
    if (!target.startsWith(`${pkg.dir}/`)) {
      problems.push(`${pkg.name} ${file} imports ${specifier}, which leaves the package (resolves to ${target})`);
    }
  }
  return problems;
}

/** One source file of a package, as the text rules read it. */
export interface SourceText {
  file: string;
  text: string;
}

/**
 * The host knows adapters only through the registry and their declared capabilities: no plugin compares an adapter
 * id with a string literal (`adapterId === 'redis'`), in either order. A community adapter then takes part in every
 * feature an in-repo one does.
 */
export function adapterIdBranchViolations(plugin: WorkspacePackage, files: readonly SourceText[]): string[] {
  const branch = /\badapterId\s*[!=]==?\s*['"`]|['"`][^'"`\n]*['"`]\s*[!=]==?\s*[\w.?]*\badapterId\b/;
  const problems: string[] = [];
  for (const { file, text } of files) {
    text.split('\n').forEach((line, index) => {
      if (branch.test(line)) problems.push(`${plugin.name} ${file}:${index + 1} compares an adapter id with a literal; ask the adapter's declared capabilities instead: ${line.trim()}`);
    });
  }
  return problems;
}

/** Database client libraries: the adapters that speak to a database server own them, never a plugin. */
export const DATABASE_CLIENTS = ['pg', 'mysql2', 'mysql', 'mariadb', 'ioredis', 'redis', 'mongodb', 'mssql', 'tedious', 'better-sqlite3', 'sqlite3'] as const;

/**
 * No plugin depends on a database client library (a runtime dependency): talking to a backed-up database is a
 * source adapter's capability. The ORM's own drivers (`@mikro-orm/*`, libsql) are the host's database, not a source's.
 */
export function databaseClientViolations(plugin: WorkspacePackage): string[] {
  return entries(plugin.manifest, RUNTIME_FIELDS)
    .filter(([, dep]) => (DATABASE_CLIENTS as readonly string[]).includes(dep))
    .map(([field, dep]) => `${plugin.name} must not depend on the database client ${dep} (found in ${field}); a source adapter's scratch capability talks to its database`);
}

/** A cast of the ORM handle: `builder as Knex`, `em as SqlEntityManager`, `as unknown as EntityManager`, `.client as`. */
const HANDLE_CAST = /\bas\s+(?:unknown\s+as\s+)?(?:Knex|SqlEntityManager|EntityManager|KnexClient|AbstractSqlConnection|MikroORM)(?![\w.])|\.client\s+as\s/;

/**
 * Outside `platform/`, code never casts the database handle: migrations get a typed knex from `defineMigration`,
 * `OrmDatabase.em()` is the SQL EntityManager and `pgClient()` the PostgreSQL pool. A cast would hide a wrong type
 * behind the one place (`@holdfast/orm-port`) that knows what the persistence layer hands out.
 */
export function databaseHandleCastViolations(pkg: WorkspacePackage, files: readonly SourceText[]): string[] {
  const problems: string[] = [];
  for (const { file, text } of files) {
    text.split('\n').forEach((line, index) => {
      const code = line.trim();
      if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) return;
      if (HANDLE_CAST.test(code)) problems.push(`${pkg.name} ${file}:${index + 1} casts the database handle; use defineMigration, OrmDatabase.em() or pgClient(): ${code}`);
    });
  }
  return problems;
}

/**
 * `platform/*` is the infrastructure the plugins stand on (database, HTTP, boot): it never depends on a plugin, in
 * any dependency field, nor imports one. Otherwise a plugin could not be left out of a composition, and a library
 * change would have to wait for a feature.
 */
export function platformViolations(pkg: WorkspacePackage, plugins: readonly WorkspacePackage[]): string[] {
  const pluginNames = new Set(plugins.map((plugin) => plugin.name));
  const problems: string[] = [];
  for (const [field, dep] of entries(pkg.manifest, ALL_FIELDS)) {
    if (pluginNames.has(dep)) problems.push(`${pkg.name} must not depend on plugin ${dep} (found in ${field}); platform packages stand below the plugins`);
  }
  for (const { file, specifier } of pkg.imports) {
    const target = packageOfSpecifier(specifier);
    if (target && pluginNames.has(target)) problems.push(`${pkg.name} ${file} imports plugin ${specifier}; platform packages stand below the plugins`);
  }
  return problems;
}
