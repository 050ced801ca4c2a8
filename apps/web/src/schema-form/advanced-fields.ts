import type { JsonSchema } from './json-schema';

/**
 * Settings most people never change: timeouts, transfer sizes and parallelism, restore switches, tool and API
 * locations, TLS details and the SSH tunnel. Used for a field whose schema does not say `advanced` itself.
 */
const ADVANCED_NAME =
  /timeout|keepalive|maxTries|SizeMiB$|SizeKiB$|^parallel|^concurrency$|^maxConnections$|^maxConcurrentFiles$|^scanCount$|^batchSize$|^restore[A-Z]|^replaceExisting$|^dropBeforeRestore$|^keepPreviousFile$|Directory$|^spoolDir$|BaseUrl$|^tokenUrl$|^apiUrl$|^apiVersion$|^helperImage$|^tls[A-Z]|^ca$|rejectUnauthorized$|^trustServerCertificate$|^ssh([A-Z]|$)|^globalsWithoutRolePasswords$|^allowSeparateTransferHost$/i;

/**
 * True for a field the adapter form puts under "Advanced settings" (issue 47, item 6). The adapter's JSON Schema
 * decides when it says (`.meta({ advanced: true })` or `false`); otherwise a required field is never advanced and
 * the name rule above decides. Required fields stay in view: a form must never hide what it needs.
 */
export function isAdvancedField(name: string, property: JsonSchema, isRequired: boolean): boolean {
  if (isRequired) return false;
  if (typeof property.advanced === 'boolean') return property.advanced;
  return ADVANCED_NAME.test(name);
}
