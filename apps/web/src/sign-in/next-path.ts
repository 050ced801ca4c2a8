/** Only same-app paths are followed after sign-in (an open redirect would hand the session page to anyone). */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.includes('\\') ? next : '/';
}

/** Where a single sign-on button leads: the provider's start route, landing back on `next` afterwards. */
export function ssoStartHref(startUrl: string, next: string): string {
  return `${startUrl}?redirectTo=${encodeURIComponent(next)}`;
}
