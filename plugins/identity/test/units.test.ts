import { describe, expect, it } from 'vitest';
import { isSecureRequest, readCookie, sessionCookie } from '../src/auth/session-cookie.js';
import { assertCsrf } from '../src/auth/csrf.js';
import { csrfTokenFor, newTimeOrderedId } from '../src/crypto/tokens.js';
import { identityConfigFromEnv } from '../src/config.js';
import { ALL_PERMISSIONS, PERMISSION_CATALOG, SCOPABLE_RESOURCES } from '../src/permissions/catalog.js';
import type { RequestInfo } from '@holdfast/kernel';

function requestInfo(method: string, path: string, headers: Record<string, string> = {}): RequestInfo {
  return { method, path, ip: '127.0.0.1', userAgent: undefined, headers, cookie: () => undefined };
}

describe('session cookie', () => {
  it('reads one cookie among several and gets Secure only over TLS or a trusted forwarded https', () => {
    expect(readCookie('a=1; holdfast_session=abc%2Bdef; b=2', 'holdfast_session')).toBe('abc+def');
    expect(readCookie('a=1', 'holdfast_session')).toBeUndefined();
    const forwarded = { headers: { 'x-forwarded-proto': 'https' } };
    expect(isSecureRequest(forwarded, false)).toBe(false);
    expect(isSecureRequest(forwarded, true)).toBe(true);
    expect(isSecureRequest({ secure: true, headers: {} }, false)).toBe(true);
    expect(sessionCookie('tok', new Date(Date.now() + 60_000), true)).toMatch(/HttpOnly; SameSite=Lax; Max-Age=(59|60); Expires=.*; Secure$/);
  });
});

describe('CSRF', () => {
  it('passes safe methods and exempt paths, requires the session-bound token on other mutations', () => {
    const token = 'session-token';
    expect(() => assertCsrf(requestInfo('GET', '/api/users'), token)).not.toThrow();
    expect(() => assertCsrf(requestInfo('POST', '/api/auth/sign-in'), token)).not.toThrow();
    expect(() => assertCsrf(requestInfo('DELETE', '/api/users/1'), token)).toThrow(/CSRF/);
    expect(() => assertCsrf(requestInfo('DELETE', '/api/users/1', { 'x-csrf-token': csrfTokenFor('other-session') }), token)).toThrow(/CSRF/);
    expect(() => assertCsrf(requestInfo('DELETE', '/api/users/1', { 'x-csrf-token': csrfTokenFor(token) }), token)).not.toThrow();
    expect(csrfTokenFor(token)).not.toContain(token);
  });
});

describe('time-ordered ids', () => {
  it('sort in creation order within one millisecond and look like UUID v7', () => {
    const ids = Array.from({ length: 50 }, () => newTimeOrderedId(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('config and catalog', () => {
  it('reads the environment switches', () => {
    const config = identityConfigFromEnv({ DISABLE_EMAIL_LOGIN: 'TRUE', TRUST_PROXY: '0', HOLDFAST_ADMIN_EMAIL: ' a@b.c ' });
    expect(config).toMatchObject({ isEmailLoginDisabled: true, trustProxy: false, adminEmail: 'a@b.c', adminPassword: undefined });
  });

  it('reads the step-up window (issue 45.4): default 300 s, whole seconds 1-3600, anything else refused by name', () => {
    expect(identityConfigFromEnv({}).stepUpWindowMs).toBe(300_000);
    expect(identityConfigFromEnv({ HOLDFAST_STEP_UP_WINDOW_SECONDS: ' 60 ' }).stepUpWindowMs).toBe(60_000);
    for (const bad of ['0', '-5', '1.5', 'ten', '3601']) {
      expect(() => identityConfigFromEnv({ HOLDFAST_STEP_UP_WINDOW_SECONDS: bad }), bad).toThrow(/HOLDFAST_STEP_UP_WINDOW_SECONDS must be a whole number of seconds from 1 to 3600/);
    }
  });

  it('has unique area:verb names and scopable permissions that all exist', () => {
    expect(new Set(ALL_PERMISSIONS).size).toBe(PERMISSION_CATALOG.length);
    for (const name of ALL_PERMISSIONS) expect(name).toMatch(/^[a-z-]+:[a-z]+$/);
    for (const permissions of Object.values(SCOPABLE_RESOURCES)) for (const p of permissions) expect(ALL_PERMISSIONS).toContain(p);
  });
});
