import type { BrowserContext } from 'playwright-core';

/** A signed-in API caller (cookie session with its CSRF token), for set-up beside the pages. */
export interface SessionCaller {
  cookie: string;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

/**
 * Signs in through `POST /api/auth/sign-in` (not the form: the tests of this file are about the pages behind it)
 * and returns a caller with that session.
 */
export async function signInCaller(baseUrl: string, email: string, password: string): Promise<SessionCaller> {
  const answer = await fetch(`${baseUrl}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
  if (answer.status !== 200) throw new Error(`sign-in of ${email} answered ${answer.status}: ${await answer.text()}`);
  const cookie = answer.headers
    .getSetCookie()
    .map((line) => line.split(';')[0]!)
    .join('; ');
  const session = (await (await fetch(`${baseUrl}/api/auth/session`, { headers: { cookie } })).json()) as { csrfToken: string };
  return {
    cookie,
    async call(method, path, body) {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { cookie, 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json().catch(() => null)) as any };
    },
  };
}

/** Puts a caller's session cookies into a browser context, so its pages open signed in as that user. */
export async function useSessionIn(context: BrowserContext, baseUrl: string, caller: SessionCaller): Promise<void> {
  const url = new URL(baseUrl);
  await context.addCookies(
    caller.cookie.split('; ').map((pair) => {
      const [name, ...rest] = pair.split('=');
      return { name: name!, value: rest.join('='), domain: url.hostname, path: '/' };
    }),
  );
}

/** Polls an execution until it is final; returns its status. */
export async function waitForFinal(caller: SessionCaller, executionId: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const answer = await caller.call('GET', `/api/executions/${executionId}`);
    const status = answer.body?.data?.status as string | undefined;
    if (status && ['Success', 'Partial', 'Failed', 'Cancelled'].includes(status)) return status;
    // Once a second: these reads count against the user's own budget, like the pages' reads.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  throw new Error(`execution ${executionId} did not finish within ${timeoutMs} ms`);
}
