/** Name of the session cookie. */
export const SESSION_COOKIE = 'holdfast_session';
/** Header that carries the CSRF token on cookie-authenticated mutations. */
export const CSRF_HEADER = 'x-csrf-token';

/** The value of cookie `name` in a `Cookie` header, or undefined. */
export function readCookie(header: string | string[] | undefined, name: string): string | undefined {
  const joined = Array.isArray(header) ? header.join('; ') : header;
  if (!joined) return undefined;
  for (const part of joined.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0 || part.slice(0, separator).trim() !== name) continue;
    const value = part.slice(separator + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}

/** Whether a request arrived over TLS: the http plugin's flag, else `X-Forwarded-Proto` when the proxy is trusted. */
export function isSecureRequest(
  request: { secure?: boolean; headers: Readonly<Record<string, string | string[] | undefined>> },
  trustProxy: boolean,
): boolean {
  if (request.secure) return true;
  if (!trustProxy) return false;
  const forwarded = request.headers['x-forwarded-proto'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

/** `Set-Cookie` value that stores the session: HttpOnly, SameSite=Lax, Secure behind TLS, expiring with it. */
export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return [
    `${SESSION_COOKIE}=${encodeURIComponent(token)}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
    `Max-Age=${maxAge}`,
    `Expires=${expiresAt.toUTCString()}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** `Set-Cookie` value that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return [`${SESSION_COOKIE}=`, 'Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=0', 'Expires=Thu, 01 Jan 1970 00:00:00 GMT', ...(secure ? ['Secure'] : [])].join('; ');
}
