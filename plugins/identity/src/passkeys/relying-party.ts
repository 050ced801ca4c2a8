import { HttpError, type RouteRequest } from '@holdfast/kernel';

/** Who the browser must be talking to for a passkey ceremony to count. */
export interface RelyingParty {
  /** Domain the credentials are scoped to (the host name of the origin). */
  rpID: string;
  /** Exact origin (`scheme://host[:port]`) the browser reports in its client data. */
  origin: string;
  name: string;
}

const RP_NAME = 'Holdfast';

function firstHeader(value: string | string[] | undefined): string | undefined {
  return (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim() || undefined;
}

/**
 * The relying party of a request. With `HOLDFAST_PUBLIC_URL` set, its origin is the one accepted; otherwise the
 * origin is the one the request was addressed to (scheme from TLS, host from `Host`), which is what a browser
 * on the same page reports. A phishing page on another origin therefore never matches.
 */
export function relyingPartyOf(request: RouteRequest, publicUrl: string | undefined): RelyingParty {
  if (publicUrl) {
    const url = new URL(publicUrl);
    return { rpID: url.hostname, origin: url.origin, name: RP_NAME };
  }
  const host = firstHeader(request.headers.host);
  if (!host) throw new HttpError(400, 'The request has no Host header, so the passkey relying party is unknown; set HOLDFAST_PUBLIC_URL');
  let url: URL;
  try {
    url = new URL(`${request.secure ? 'https' : 'http'}://${host}`);
  } catch {
    throw new HttpError(400, 'The Host header is not a valid host name');
  }
  return { rpID: url.hostname, origin: url.origin, name: RP_NAME };
}
