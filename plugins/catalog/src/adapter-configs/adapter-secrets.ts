import { ValidationError, describeConfigIssues, type AnyAdapterDefinition } from '@holdfast/kernel';
import type { SecretBox } from '../crypto/secret-box.js';
import { credentialUrlFields } from './secret-targets.js';

/** A config as stored: secret fields hold sealed strings. */
export type StoredConfig = Record<string, unknown>;

/** True when a submitted secret means "keep the stored one" (omitted, null or empty). */
function isKeepMarker(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/**
 * Builds the plaintext config of an update: the submitted fields, with every secret that was sent empty or omitted
 * taken from the stored config.
 */
export function mergeSecrets(
  submitted: Record<string, unknown>,
  storedPlain: Record<string, unknown> | null,
  secrets: readonly string[],
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...submitted };
  for (const field of secrets) {
    if (!isKeepMarker(merged[field])) continue;
    const previous = storedPlain?.[field];
    if (previous === undefined) delete merged[field];
    else merged[field] = previous;
  }
  return merged;
}

/** Validates a plaintext config with the adapter's own schema; 400 naming the fields, never echoing values. */
export function validateConfig(definition: AnyAdapterDefinition, config: Record<string, unknown>): Record<string, unknown> {
  const parsed = definition.configSchema.safeParse(config);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: ['body', 'config', ...issue.path.map(String)].join('.'),
      message: issue.message.replace(/^Invalid input: /, ''),
    }));
    throw new ValidationError(`Invalid request: config: ${describeConfigIssues(parsed.error)}`, issues);
  }
  if (typeof parsed.data !== 'object' || parsed.data === null || Array.isArray(parsed.data)) {
    throw new ValidationError('Invalid request: config: must be an object');
  }
  return parsed.data as Record<string, unknown>;
}

/** Seals every present secret field, and every URL that carries credentials, for storage. */
export function sealConfig(box: SecretBox, config: Record<string, unknown>, secrets: readonly string[]): StoredConfig {
  const stored: StoredConfig = { ...config };
  for (const field of new Set([...secrets, ...credentialUrlFields(config)])) {
    if (stored[field] === undefined || stored[field] === null || stored[field] === '') {
      delete stored[field];
      continue;
    }
    stored[field] = box.sealJson(stored[field]);
  }
  return stored;
}

/** Opens every sealed secret field. */
export function openConfig(box: SecretBox, stored: StoredConfig, secrets: readonly string[]): Record<string, unknown> {
  const plain: Record<string, unknown> = { ...stored };
  for (const field of secrets) {
    const value = plain[field];
    if (typeof value === 'string') plain[field] = box.openJson(value);
  }
  return plain;
}

/** The public view: secret fields removed, and a map saying which ones hold a value. */
export function publicConfig(
  stored: StoredConfig,
  secrets: readonly string[],
): { config: Record<string, unknown>; secretStatus: Record<string, boolean> } {
  const config: Record<string, unknown> = { ...stored };
  const secretStatus: Record<string, boolean> = {};
  for (const field of secrets) {
    secretStatus[field] = typeof config[field] === 'string' && config[field] !== '';
    delete config[field];
  }
  return { config, secretStatus };
}
