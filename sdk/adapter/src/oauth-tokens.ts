import { AdapterError, fetchKeepingCredentialsHome, maskSecrets, type AdapterContext, type AdapterErrorOrigin } from '@holdfast/kernel/adapter';

/** The OAUTH credential profile payload (plugins/catalog credential type `OAUTH`). */
export interface OAuthProfile {
  clientId: string;
  clientSecret: string;
  refreshToken?: string;
  accessToken?: string;
  tokenExpiresAt?: string;
}

/** Where and how to refresh tokens. */
export interface OAuthOptions {
  origin: AdapterErrorOrigin;
  /** Vendor name for messages, e.g. "Dropbox". */
  vendor: string;
  tokenUrl: string;
  /** Extra form fields of the refresh request (Microsoft identity platform wants `scope`). */
  extraParams?: Record<string, string>;
  context: AdapterContext;
}

/** Refresh a little early, so a token does not expire between the check and the request. */
const EARLY_REFRESH_MS = 60_000;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Expiry of a stored `tokenExpiresAt` (ISO date or epoch milliseconds); undefined when unknown. */
function expiryOf(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const parsed = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.isFinite(parsed) ? parsed : undefined;
}

/**
 * The access token of one adapter instance: taken from the assigned OAUTH profile, refreshed with the refresh token
 * when missing or expired (or when the API answered 401), and written back through `context.updateCredentials` so the
 * host stores it encrypted. One refresh runs at a time; concurrent callers share it.
 */
export class OAuthTokens {
  private profileCache?: OAuthProfile;
  private token?: { value: string; expiresAt?: number };
  private refreshing?: Promise<string>;

  constructor(private readonly options: OAuthOptions) {}

  private fail(code: 'CONFIG' | 'AUTH' | 'TRANSIENT', message: string, cause?: unknown): AdapterError {
    return new AdapterError(this.options.origin, code, message, { cause });
  }

  /** The assigned profile; a CONFIG error saying what to assign when there is none (never naming a secret). */
  profile(): OAuthProfile {
    if (this.profileCache) return this.profileCache;
    const raw = this.options.context.credentials?.primary;
    const name = `${this.options.origin.kind}-${this.options.origin.id}`;
    if (!raw) {
      throw this.fail('CONFIG', `no credential profile assigned: a credential profile of type OAUTH must be assigned to this ${this.options.vendor} destination (${name})`);
    }
    if (raw.type !== undefined && raw.type !== 'OAUTH') {
      throw this.fail('CONFIG', `the assigned credential profile is of type ${String(raw.type)}: a credential profile of type OAUTH must be assigned (${name})`);
    }
    const profile: OAuthProfile = {
      clientId: text(raw.clientId) ?? '',
      clientSecret: text(raw.clientSecret) ?? '',
      refreshToken: text(raw.refreshToken),
      accessToken: text(raw.accessToken),
      tokenExpiresAt: text(raw.tokenExpiresAt),
    };
    if (!profile.refreshToken && !profile.accessToken) {
      throw this.fail('CONFIG', `the OAUTH credential profile has neither a refresh token nor an access token: authorize the ${this.options.vendor} app and store its refresh token in the profile`);
    }
    this.profileCache = profile;
    if (profile.accessToken) this.token = { value: profile.accessToken, expiresAt: expiryOf(profile.tokenExpiresAt) };
    return profile;
  }

  /** A usable access token, refreshed first when missing or (about to be) expired. */
  async accessToken(signal?: AbortSignal): Promise<string> {
    const profile = this.profile();
    const token = this.token;
    const isFresh = token && (token.expiresAt === undefined || token.expiresAt - EARLY_REFRESH_MS > Date.now());
    if (token && (isFresh || !profile.refreshToken)) return token.value;
    return this.refresh(signal);
  }

  /** Drops the current token and refreshes; `false` when there is no refresh token to do it with. */
  async renewAfterRejection(rejected: string, signal?: AbortSignal): Promise<boolean> {
    if (!this.profile().refreshToken) return false;
    // Another request may have refreshed already while this one waited for its 401.
    if (this.token && this.token.value !== rejected) return true;
    this.token = undefined;
    await this.refresh(signal);
    return true;
  }

  private refresh(signal?: AbortSignal): Promise<string> {
    this.refreshing ??= this.doRefresh(signal).finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async doRefresh(signal?: AbortSignal): Promise<string> {
    const profile = this.profile();
    const { vendor } = this.options;
    if (!profile.refreshToken) throw this.fail('AUTH', `the ${vendor} access token expired and the OAUTH profile has no refresh token to renew it`);
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: profile.refreshToken,
      client_id: profile.clientId,
      client_secret: profile.clientSecret,
      ...this.options.extraParams,
    });
    let response: Response;
    try {
      // The client secret and refresh token in the body never follow a redirect to another host.
      response = await fetchKeepingCredentialsHome(this.options.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(30_000)]) : AbortSignal.timeout(30_000),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      throw this.fail('TRANSIENT', `cannot reach the ${vendor} token endpoint to refresh the access token (${cause})`, error);
    }
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof body.access_token !== 'string') throw this.refreshError(response.status, body);
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : Number(body.expires_in);
    const expiresAt = Number.isFinite(expiresIn) ? Date.now() + expiresIn * 1000 : undefined;
    this.token = { value: body.access_token, expiresAt };
    const patch: Record<string, unknown> = { accessToken: body.access_token };
    if (expiresAt !== undefined) patch.tokenExpiresAt = new Date(expiresAt).toISOString();
    if (typeof body.refresh_token === 'string' && body.refresh_token !== profile.refreshToken) {
      // Rotating vendors (Microsoft) invalidate the old refresh token soon: losing the new one locks the profile out.
      patch.refreshToken = body.refresh_token;
    }
    this.profileCache = { ...profile, ...(patch as Partial<OAuthProfile>) };
    await this.writeBack(patch);
    return body.access_token;
  }

  private async writeBack(patch: Record<string, unknown>): Promise<void> {
    const update = this.options.context.updateCredentials;
    if (!update) return;
    try {
      await update('primary', patch);
    } catch (error) {
      // The fresh token still works for this run; the next run refreshes again (or fails clearly if it rotated).
      this.options.context.logger.warn(
        { adapter: `${this.options.origin.kind}-${this.options.origin.id}`, error: (error as Error).message },
        'could not store the refreshed OAuth token in the credential profile',
      );
    }
  }

  private refreshError(status: number, body: Record<string, unknown>): AdapterError {
    const { vendor } = this.options;
    const code = typeof body.error === 'string' ? body.error : `HTTP ${status}`;
    const description = typeof body.error_description === 'string' ? `: ${body.error_description.slice(0, 300)}` : '';
    const secrets = [this.profileCache?.refreshToken, this.profileCache?.clientSecret];
    const detail = maskSecrets(`${code}${description}`, secrets);
    if (code === 'invalid_grant') {
      return this.fail('AUTH', `${vendor} rejected the refresh token (${detail}): it was revoked, expired or belongs to another app; authorize again and update the OAUTH credential profile`);
    }
    if (code === 'invalid_client' || code === 'unauthorized_client' || status === 401) {
      return this.fail('AUTH', `${vendor} rejected the app credentials (${detail}): check clientId and clientSecret in the OAUTH credential profile`);
    }
    return this.fail(status >= 500 || status === 429 ? 'TRANSIENT' : 'AUTH', `refreshing the ${vendor} access token failed (${detail})`);
  }
}
