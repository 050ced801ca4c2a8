import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';

/**
 * Who may read `/metrics` (issue 41 item 7: it was open to anyone and named every job and adapter). The address rule
 * comes from `HOLDFAST_METRICS_ALLOW`; its default depends on whether a token is configured, so an installation
 * without one is readable from this machine only, and one with a token from anywhere that presents it.
 */
export interface MetricsAccess {
  /** SHA-256 of `HOLDFAST_METRICS_TOKEN`, when set. */
  envTokenSha256?: Buffer;
  /** The explicit `HOLDFAST_METRICS_ALLOW` rule: `any`, a list, or unset (the default applies). */
  allow: 'any' | BlockList | undefined;
}

/** Loopback addresses: the default allow-list while no token is configured. */
function loopback(): BlockList {
  const list = new BlockList();
  list.addSubnet('127.0.0.0', 8, 'ipv4');
  list.addAddress('::1', 'ipv6');
  return list;
}

const MIN_TOKEN_LENGTH = 16;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function parseAllowList(value: string): 'any' | BlockList {
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (entries.length === 1 && entries[0] === '*') return 'any';
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? undefined : Number(prefix);
    const maxBits = family === 4 ? 32 : 128;
    if (family === 0 || extra !== undefined || (bits !== undefined && (!/^\d+$/.test(prefix!) || bits > maxBits))) {
      throw new Error(`HOLDFAST_METRICS_ALLOW entry "${entry}" is not an IP address or CIDR block (e.g. 10.0.0.0/8, ::1), nor "*"`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, bits, type);
  }
  return list;
}

/** Reads `HOLDFAST_METRICS_TOKEN` and `HOLDFAST_METRICS_ALLOW`; a bad value is an error naming its variable. */
export function metricsAccessFromEnv(env: NodeJS.ProcessEnv): MetricsAccess {
  const token = env.HOLDFAST_METRICS_TOKEN?.trim();
  if (token && token.length < MIN_TOKEN_LENGTH) throw new Error(`HOLDFAST_METRICS_TOKEN must be at least ${MIN_TOKEN_LENGTH} characters`);
  const allow = env.HOLDFAST_METRICS_ALLOW?.trim();
  return { ...(token ? { envTokenSha256: sha256(token) } : {}), allow: allow ? parseAllowList(allow) : undefined };
}

/** An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, as a dual-stack listener reports IPv4 peers) read as IPv4. */
function plainAddress(ip: string): { address: string; type: 'ipv4' | 'ipv6' } | undefined {
  const unmapped = ip.toLowerCase().startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  const family = isIP(unmapped);
  return family === 0 ? undefined : { address: unmapped, type: family === 4 ? 'ipv4' : 'ipv6' };
}

/** What the route decides for one caller. */
export type MetricsVerdict = 'allowed' | 'address-refused' | 'token-required';

/**
 * The decision for a caller at `ip` presenting `authorization`. Tokens: the env token and the settings token (its
 * SHA-256, `PUT /api/settings/observability`); either one is accepted. Addresses: `HOLDFAST_METRICS_ALLOW`, or by
 * default loopback only while no token is configured and any address once one is.
 */
export function metricsVerdict(access: MetricsAccess, settingsTokenSha256: string | null, ip: string, authorization: string | undefined): MetricsVerdict {
  const expected = [access.envTokenSha256, settingsTokenSha256 ? Buffer.from(settingsTokenSha256, 'hex') : undefined].filter((hash): hash is Buffer => hash !== undefined);
  const allow = access.allow ?? (expected.length > 0 ? 'any' : loopback());
  if (allow !== 'any') {
    const peer = plainAddress(ip);
    if (!peer || !allow.check(peer.address, peer.type)) return 'address-refused';
  }
  if (expected.length === 0) return 'allowed';
  const presented = typeof authorization === 'string' && authorization.startsWith('Bearer ') ? authorization.slice(7).trim() : '';
  if (!presented) return 'token-required';
  const hash = sha256(presented);
  // Every configured token is compared (constant time each), so timing does not tell which one exists.
  let isMatch = false;
  for (const candidate of expected) if (timingSafeEqual(hash, candidate)) isMatch = true;
  return isMatch ? 'allowed' : 'token-required';
}
