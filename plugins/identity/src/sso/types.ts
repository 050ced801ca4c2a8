/** One row of a provider's group mapping table: an IdP group value and the Holdfast group it grants. */
export interface GroupMapping {
  /** Value as it appears in the group claim (OIDC) or attribute (SAML), compared exactly. */
  claimValue: string;
  groupId: string;
}

/** SAML attribute names of the user's email, display name (the group attribute is `groupClaim`). */
export interface AttributeMapping {
  email?: string;
  name?: string;
}

/** What an identity provider asserted about the person signing in, after the protocol checks passed. */
export interface ExternalIdentity {
  /** Stable id at the provider: OIDC `sub`, SAML NameID. */
  subject: string;
  email: string | undefined;
  /** Whether the provider vouches for the email (OIDC `email_verified`; SAML: signed assertion). */
  emailVerified: boolean;
  name: string | undefined;
  /** Group names found in the configured claim/attribute; undefined when no claim is configured. */
  groups: string[] | undefined;
}

/** The sign-in protocol of a provider. */
export type SsoProtocol = 'oidc' | 'saml';
