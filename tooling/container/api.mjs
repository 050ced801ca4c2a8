// A small HTTP client for the container tests: signs in like the web app (session cookie + X-CSRF-Token) and
// waits for runs through GET /api/executions/:id.
export class HoldfastApi {
  constructor(baseUrl) {
    this.baseUrl = baseUrl;
    this.cookie = undefined;
    this.csrf = undefined;
  }

  /** One request; returns { status, body, headers }. Never throws on a 4xx/5xx (tests assert the status). */
  async request(method, path, body) {
    const headers = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookie) headers.cookie = this.cookie;
    if (this.csrf && method !== 'GET') headers['x-csrf-token'] = this.csrf;
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    let parsed = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON (the web app's HTML)
    }
    return { status: response.status, body: parsed, headers: response.headers };
  }

  /** Like request(), but a status other than `expected` throws with the answer's error. */
  async call(method, path, body, expected = [200, 201]) {
    const answer = await this.request(method, path, body);
    if (!expected.includes(answer.status)) {
      throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 500)}`);
    }
    return answer.body?.data ?? answer.body;
  }

  async signIn(email, password) {
    const answer = await this.request('POST', '/api/auth/sign-in', { email, password });
    if (answer.status !== 200) throw new Error(`sign-in answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    this.cookie = answer.headers.get('set-cookie').split(';')[0];
    this.csrf = answer.body.csrfToken;
    return answer.body;
  }

  /** Polls a run until it leaves Pending/Running; returns it with its logs. */
  async waitForRun(executionId, timeoutMs = 180_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = await this.call('GET', `/api/executions/${executionId}?includeLogs=true`);
      if (!['Pending', 'Running'].includes(run.status)) return run;
      if (Date.now() > deadline) throw new Error(`run ${executionId} still ${run.status} after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Waits until GET /api/health answers 200; returns the milliseconds since `startedAt`. */
export async function waitForHealth(baseUrl, startedAt, timeoutMs = 120_000) {
  for (;;) {
    try {
      const response = await fetch(`${baseUrl}/api/health`);
      if (response.status === 200) return Date.now() - startedAt;
    } catch {
      // not listening yet
    }
    if (Date.now() - startedAt > timeoutMs) throw new Error(`${baseUrl}/api/health did not answer 200 within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
