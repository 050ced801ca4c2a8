// OAuth token handling is the SDK's (one copy for every cloud drive): refresh, write-back, shared refreshes.
export { OAuthTokens, type OAuthOptions, type OAuthProfile } from '@holdfast/sdk';
