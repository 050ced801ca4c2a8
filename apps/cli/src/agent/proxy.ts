import type { Agent } from 'node:http';
import { HttpsProxyAgent } from 'https-proxy-agent';

/** True when `NO_PROXY` names the host (exact, a domain suffix such as `.example.com` or `example.com`, or `*`). */
function isExempt(hostname: string, noProxy: string | undefined): boolean {
  if (!noProxy) return false;
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return noProxy
    .split(/[\s,]+/)
    .map((entry) => entry.trim().toLowerCase().replace(/:\d+$/, ''))
    .filter(Boolean)
    .some((entry) => entry === '*' || host === entry.replace(/^\./, '') || host.endsWith(entry.startsWith('.') ? entry : `.${entry}`));
}

/**
 * The proxy for a connection to `server`, from the usual variables: `HTTPS_PROXY` for https servers, `HTTP_PROXY` for
 * http ones (lower-case names too), `NO_PROXY` exempts hosts. The WebSocket goes through it with HTTP CONNECT, so TLS
 * stays end to end between the agent and the server.
 */
export function proxyAgentFor(server: string, env: NodeJS.ProcessEnv): { agent: Agent; proxy: string } | undefined {
  const url = new URL(server);
  const proxy =
    url.protocol === 'https:'
      ? (env.HTTPS_PROXY ?? env.https_proxy ?? env.HTTP_PROXY ?? env.http_proxy)
      : (env.HTTP_PROXY ?? env.http_proxy);
  if (!proxy || isExempt(url.hostname, env.NO_PROXY ?? env.no_proxy)) return undefined;
  return { agent: new HttpsProxyAgent(proxy), proxy: new URL(proxy).host };
}
