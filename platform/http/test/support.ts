// Test support: a real koa app on an ephemeral port, a pino logger whose lines the tests read, and recording
// fakes of the identity plugin's ports (Authenticator, AccessPolicy, RateLimiter) as the kernel defines them.
import {
  TOKENS,
  type AccessPolicy,
  type AuthContext,
  type Authenticator,
  type RateLimitClass,
  type RateLimiter,
  type RateLimitOutcome,
  type RequestInfo,
  type ResourceRef,
  type RouteDefinition,
} from '@holdfast/kernel';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { container, type DependencyContainer } from 'tsyringe';
import { createHttpApp } from '../src/index.js';

export interface RunningApp {
  url: string;
  container: DependencyContainer;
  /** Every pino line the app wrote, parsed. */
  logs: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The routes, or a function building them from the container (as `HoldfastPlugin.routes` does). */
  routes: RouteDefinition[] | ((container: DependencyContainer) => RouteDefinition[]);
  register?: (container: DependencyContainer) => void;
  trustProxy?: boolean;
  bodyLimitBytes?: number;
}

/** Starts the app on 127.0.0.1 with a port the OS picks; each call gets its own child container. */
export async function startApp(options: StartOptions): Promise<RunningApp> {
  const child = container.createChildContainer();
  options.register?.(child);
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) logs.push(JSON.parse(line));
      callback();
    },
  });
  const logger = pino({ level: 'debug' }, sink);
  const app = createHttpApp({
    container: child,
    routes: typeof options.routes === 'function' ? options.routes(child) : options.routes,
    logger,
    trustProxy: options.trustProxy ?? false,
    ...(options.bodyLimitBytes ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    container: child,
    logs,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Identities the fake authenticator hands out for `Authorization: Bearer <token>`. */
export const IDENTITIES: Record<string, AuthContext> = {
  admin: { userId: 'u-admin', permissions: [], isSuperAdmin: true, authMethod: 'session' },
  reader: { userId: 'u-reader', permissions: ['things:read', 'jobs:read'], isSuperAdmin: false, authMethod: 'apikey', apiKeyId: 'k1' },
  writer: { userId: 'u-writer', permissions: ['things:write'], isSuperAdmin: false, authMethod: 'apikey', apiKeyId: 'k2' },
  nobody: { userId: 'u-nobody', permissions: [], isSuperAdmin: false, authMethod: 'session' },
};

/** Records the order in which the ports are consulted. */
export type CallLog = string[];

export class FakeAuthenticator implements Authenticator {
  readonly requests: RequestInfo[] = [];
  constructor(private readonly calls: CallLog = []) {}
  async authenticate(request: RequestInfo): Promise<AuthContext | null> {
    this.calls.push('authenticate');
    this.requests.push(request);
    const header = request.headers.authorization;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : request.cookie('sid');
    return (token && IDENTITIES[token]) || null;
  }
}

/** Grants `jobs:read` only on the job ids listed; records every question asked. */
export class FakeAccessPolicy implements AccessPolicy {
  readonly questions: Array<{ userId: string; permission: string; resource?: ResourceRef }> = [];
  constructor(
    private readonly calls: CallLog = [],
    private readonly allowedJobIds: string[] = [],
  ) {}
  async isAllowed(auth: AuthContext, permission: string, resource?: ResourceRef): Promise<boolean> {
    this.calls.push('authorise');
    this.questions.push({ userId: auth.userId, permission, ...(resource ? { resource } : {}) });
    if (auth.isSuperAdmin) return true;
    if (!auth.permissions.includes(permission)) return false;
    return resource?.type !== 'job' || this.allowedJobIds.includes(resource.id);
  }
  async visibleIds(): Promise<'all' | string[]> {
    return this.allowedJobIds;
  }
}

/** A fixed-window limiter over an in-memory map: `limit` points per key and class. */
export class FakeRateLimiter implements RateLimiter {
  readonly consumed: Array<{ key: string; kind: RateLimitClass }> = [];
  private readonly used = new Map<string, number>();
  constructor(
    private readonly calls: CallLog = [],
    private readonly limit = 3,
    private readonly resetMs = 42_500,
  ) {}
  async consume(clientKey: string, kind: RateLimitClass): Promise<RateLimitOutcome> {
    this.calls.push('rate-limit');
    this.consumed.push({ key: clientKey, kind });
    const id = `${kind}:${clientKey}`;
    const used = (this.used.get(id) ?? 0) + 1;
    this.used.set(id, used);
    return { allowed: used <= this.limit, limit: this.limit, remaining: Math.max(0, this.limit - used), resetMs: this.resetMs };
  }
}

/** Registers the three fakes, sharing one call log, into a container. */
export function registerFakes(target: DependencyContainer, fakes: { authenticator?: Authenticator; policy?: AccessPolicy; limiter?: RateLimiter }): void {
  if (fakes.authenticator) target.register(TOKENS.Authenticator, { useValue: fakes.authenticator });
  if (fakes.policy) target.register(TOKENS.AccessPolicy, { useValue: fakes.policy });
  if (fakes.limiter) target.register(TOKENS.RateLimiter, { useValue: fakes.limiter });
}

/** The parsed JSON of a response: error bodies and whatever else the test routes return. */
export interface JsonBody {
  [key: string]: unknown;
  error?: string;
  issues?: Array<{ path: string; message: string }>;
}

/** Walks a parsed JSON document by keys; undefined when a step is missing. */
export function at(value: unknown, ...keys: string[]): unknown {
  let node = value;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** JSON request helper. */
export async function call(
  url: string,
  init: { method?: string; token?: string; json?: unknown; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: JsonBody | undefined; text: string }> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  let body: string | undefined = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method: init.method ?? 'GET', headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as JsonBody | undefined, text };
}
