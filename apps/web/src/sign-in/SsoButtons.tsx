import { Button, Stack } from '@mantine/core';
import { ssoStartHref } from './next-path';

export interface SsoProviderChoice {
  providerId: string;
  name: string;
  type: 'oidc' | 'saml';
  startUrl: string;
}

/**
 * One button per enabled single sign-on provider. They are links, not API calls: the browser itself goes to the
 * start route, which redirects it to the identity provider and, after the callback, back to `next` signed in.
 */
export function SsoButtons({ providers, next }: { providers: SsoProviderChoice[]; next: string }) {
  if (providers.length === 0) return null;
  return (
    <Stack gap="xs" data-testid="sso-buttons">
      {providers.map((provider) => (
        <Button key={provider.providerId} component="a" href={ssoStartHref(provider.startUrl, next)} variant="default" fullWidth>
          Continue with {provider.name}
        </Button>
      ))}
    </Stack>
  );
}
