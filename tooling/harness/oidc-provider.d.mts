/** An account of the test provider. */
export interface TestAccount {
  sub: string;
  email: string;
  emailVerified: boolean;
  name: string;
  groups?: string[];
}

/** A running provider and the knobs the tests turn. */
export interface TestOpenIdProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  /** Subject the next login interaction signs in as. */
  loginAs: string;
  /** Authorization code lifetime in seconds (default 60). */
  codeTtlSeconds: number;
  close(): Promise<void>;
}

/** Starts the provider; `redirectUris()` gives Holdfast's callback URLs registered for the client. */
export function startOpenIdProvider(redirectUris: () => string[]): Promise<TestOpenIdProvider>;
