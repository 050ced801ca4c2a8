// A minimal browser for sign-in redirects: keeps cookies (by name; the test servers share 127.0.0.1, and cookies
// ignore ports), follows redirects one hop at a time so tests can stop, look and tamper in between.

/** One response as the browser saw it. */
export interface Hop {
  url: string;
  status: number;
  location: string | undefined;
  body: string;
  json: any;  
}

/** Long enough for a loaded CI machine, shorter than the 60 s test timeout so the failure names the stuck URL. */
const REQUEST_TIMEOUT_MS = 20_000;

export class Browser {
  readonly cookies = new Map<string, string>();

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private remember(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair = ''] = header.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      if (value === '' || /max-age=0/i.test(header)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** One request, no redirect following. */
  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Hop> {
    const headers: Record<string, string> = { cookie: this.cookieHeader() };
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    // A stuck hop fails within REQUEST_TIMEOUT_MS with its URL in the message, not as an anonymous test timeout.
    const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const method = init.method ?? (init.form ? 'POST' : 'GET');
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { method, headers, body, redirect: 'manual', signal });
      this.remember(response);
      text = await response.text();
    } catch (error) {
      throw new Error(`browser: ${method} ${url} failed: ${(error as Error).message}`, { cause: error });
    }
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const location = response.headers.get('location') ?? undefined;
    return { url, status: response.status, location: location ? new URL(location, url).href : undefined, body: text, json };
  }

  /** Follows redirects from `url` until a non-redirect answer, or until `stopAt` matches the next URL. */
  async follow(url: string, stopAt?: (next: string) => boolean, maxHops = 15): Promise<Hop> {
    let hop = await this.request(url);
    for (let i = 0; i < maxHops && hop.status >= 300 && hop.status < 400 && hop.location; i++) {
      if (stopAt?.(hop.location)) return hop;
      hop = await this.request(hop.location);
    }
    return hop;
  }
}
