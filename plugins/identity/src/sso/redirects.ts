import { routeResult, type RouteRequest } from '@holdfast/kernel';
import { isSecureRequest } from '../auth/session-cookie.js';
import type { SsoConfig } from './sso-config.js';

/**
 * Where the browser lands after sign-in: only a local path (`/jobs`), never another site, so a crafted sign-in link
 * cannot forward a fresh session to an attacker's page. Anything else becomes `/`.
 */
export function safeRedirectTarget(value: string | undefined): string {
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.includes('\\') || /[\r\n]/.test(value)) return '/';
  return value;
}

/** The server's address as browsers see it: `HOLDFAST_PUBLIC_URL`, else scheme and Host header of the request. */
export function publicBaseUrl(request: RouteRequest, config: SsoConfig, trustProxy: boolean): string {
  if (config.publicUrl) return config.publicUrl;
  const forwardedHost = trustProxy ? request.headers['x-forwarded-host'] : undefined;
  const hostHeader = (Array.isArray(forwardedHost) ? forwardedHost[0] : forwardedHost) ?? request.headers.host;
  const host = (Array.isArray(hostHeader) ? hostHeader[0] : hostHeader)?.split(',')[0]?.trim() || 'localhost';
  return `${isSecureRequest(request, trustProxy) ? 'https' : 'http'}://${host}`;
}

/**
 * A redirect answer. It carries a small JSON body naming the target: a redirect without a body would be turned
 * into 204 by the framework, and scripts calling the route see where it leads.
 */
export function redirectResult(status: 302 | 303, location: string, headers: Record<string, string> = {}) {
  return routeResult({ status, headers: { ...headers, Location: location, 'Cache-Control': 'no-store' }, body: { location } });
}
