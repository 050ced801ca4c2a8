import type { AuthContext } from './http-contract.js';

/** What the authentication step sees of a request; framework-neutral. */
export interface RequestInfo {
  method: string;
  path: string;
  ip: string;
  userAgent: string | undefined;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  cookie(name: string): string | undefined;
}

/**
 * The one authentication step (SPEC "Authentication" 2): session cookie first, then the Bearer key.
 * Resolves `null` when neither yields an identity. Registered by the identity plugin under `TOKENS.Authenticator`.
 */
export interface Authenticator {
  authenticate(request: RequestInfo): Promise<AuthContext | null>;
}

/** A resource a route acts on, for scoped grants (e.g. `jobs:execute` on job A only). */
export interface ResourceRef {
  type: string;
  id: string;
}

/**
 * The one permission check (SPEC "Authentication" 7) extended with scoped grants. Registered by the identity plugin
 * under `TOKENS.AccessPolicy`; without one, only super administrators pass.
 */
export interface AccessPolicy {
  isAllowed(auth: AuthContext, permission: string, resource?: ResourceRef): Promise<boolean>;
  /** Ids of `type` the identity may see with `permission`; `'all'` when unrestricted. For list routes. */
  visibleIds(auth: AuthContext, permission: string, type: string): Promise<'all' | string[]>;
}

/**
 * Rate-limit classes of SPEC "Limits", plus `browser`: the reads of a signed-in browser session, counted per user
 * (not per IP) so the web app's own page loads do not exhaust the GET limit scripted clients keep.
 */
export type RateLimitClass = 'auth' | 'api' | 'mutation' | 'browser';

/** Outcome of consuming one point. */
export interface RateLimitOutcome {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/** The one rate limiter (per client IP); registered under `TOKENS.RateLimiter`. */
export interface RateLimiter {
  consume(clientKey: string, kind: RateLimitClass): Promise<RateLimitOutcome>;
}

/** Persistence port: plugins reach the ORM through this; `em()` is a MikroORM EntityManager fork. */
export interface DatabasePort {
  readonly dialect: 'sqlite' | 'postgresql';
  /** A fresh request-scoped EntityManager (typed `unknown` so the kernel does not depend on the ORM). */
  em(): unknown;
  /** True when the database answers a trivial query. */
  isReachable(): Promise<boolean>;
}
