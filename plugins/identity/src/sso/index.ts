import { HttpError, TOKENS, type RouteDefinition, type SecretSealer } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';
import type { IdentityServices } from '../services.js';
import { ssoAdminRoutes } from './admin-routes.js';
import { OidcFlow } from './oidc-flow.js';
import { PendingSignIns } from './pending-sign-ins.js';
import { SsoProviderStore } from './provider-store.js';
import { SamlFlow } from './saml-flow.js';
import { ssoSignInRoutes } from './sign-in-routes.js';
import { ssoConfigFromEnv, type SsoConfig } from './sso-config.js';

export { oidcCallbackPath } from './oidc-flow.js';
export { samlAcsPath, samlMetadataPath } from './saml-flow.js';
export { ssoConfigFromEnv, type SsoConfig } from './sso-config.js';
export type { SsoProviderInput, SsoProviderView } from './provider-store.js';

/** Single sign-on (OIDC and SAML) over the identity services. */
export interface SsoServices {
  config: SsoConfig;
  providers: SsoProviderStore;
  oidc: OidcFlow;
  saml: SamlFlow;
  routes(): RouteDefinition[];
}

/**
 * The system-key sealer from the container (registered by the catalog plugin). Resolved on use: a server without
 * the catalog can still list and use providers without a client secret.
 */
export function sealerFrom(container: DependencyContainer): () => SecretSealer {
  return () => {
    if (!container.isRegistered(TOKENS.SecretSealer, true)) {
      throw new HttpError(503, 'The system encryption key is not available (no SecretSealer registered)');
    }
    return container.resolve(TOKENS.SecretSealer);
  };
}

/** Builds the SSO services; `env` supplies `OIDC_AUTO_REDIRECT`, `HOLDFAST_PUBLIC_URL`, `OIDC_ALLOW_HTTP`. */
export function createSsoServices(identity: IdentityServices, sealer: () => SecretSealer, env: NodeJS.ProcessEnv): SsoServices {
  const config = ssoConfigFromEnv(env);
  const em = () => identity.database.em();
  const providers = new SsoProviderStore(em, sealer);
  const pending = new PendingSignIns(em);
  const oidc = new OidcFlow(identity, providers, pending, config);
  const saml = new SamlFlow(identity, providers, pending, config);
  return {
    config,
    providers,
    oidc,
    saml,
    routes: () => [...ssoAdminRoutes(identity, providers), ...ssoSignInRoutes(config, providers, oidc, saml)],
  };
}
