import { randomUUID } from 'node:crypto';
import type { AdapterRegistry, KernelLogger } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { DependencyContainer } from 'tsyringe';
import type { SecretBox } from '../crypto/secret-box.js';
import type { AuditTrail } from './audit.js';

/** What every catalog service needs; built once by the plugin from the container. */
export interface CatalogDeps {
  container: DependencyContainer;
  /** A fresh EntityManager fork. */
  em(): EntityManager;
  /** The system-key SecretBox (loaded on first use). */
  box(): SecretBox;
  registry(): AdapterRegistry;
  logger: KernelLogger;
  audit: AuditTrail;
  /** How long a save waits for a point-in-time source's readiness check (default 10 s; tests shorten it). */
  pointInTimeReadinessTimeoutMs?: number;
}

/** Who is acting, for the audit log. */
export interface Actor {
  userId?: string | null;
  ipAddress?: string | null;
  userAgent?: string | null;
}

/** The actor of a system operation (CLI, seeding). */
export const SYSTEM_ACTOR: Actor = { userId: null, ipAddress: null, userAgent: null };

/** A new record id. */
export function newId(): string {
  return randomUUID();
}

/** ISO string of a stored date (libsql may hand back numbers or strings). */
export function iso(value: Date | string | number | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return new Date(value).toISOString();
}

/** Parses a JSON text column, answering `fallback` when it is empty or broken. */
export function parseJsonColumn<T>(text: string | null | undefined, fallback: T): T {
  if (!text) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}
