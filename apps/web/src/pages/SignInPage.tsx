import { Anchor, Divider, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link, Navigate, useNavigate, useSearchParams } from 'react-router';
import { api, session, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, FullPageLoader } from '../components/PageState';
import { safeNext, ssoStartHref } from '../sign-in/next-path';
import { PasskeyButton } from '../sign-in/PasskeyButton';
import { PasswordForm } from '../sign-in/PasswordForm';
import { SecondFactorStep } from '../sign-in/SecondFactorStep';
import { SsoButtons } from '../sign-in/SsoButtons';
import type { SecondFactorDue, SignedIn } from '../sign-in/types';
import { AuthCard } from './AuthCard';

/**
 * Sign-in: password (unless `DISABLE_EMAIL_LOGIN`), then a second factor when the account has one; passwordless
 * passkey; one button per single sign-on provider. With `OIDC_AUTO_REDIRECT` the page sends the browser straight
 * to that provider; `?local=1` stays here (the way back in when the provider is down).
 */
export default function SignInPage() {
  const auth = useAuth();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [due, setDue] = useState<SecondFactorDue | null>(null);
  const signedOut = !auth.loading && !auth.setupRequired && !auth.current;
  const providers = useQuery({ queryKey: ['auth', 'sso-providers'], queryFn: () => unwrap(api.GET('/api/auth/sso/providers')), enabled: signedOut });
  const next = safeNext(params.get('next'));
  const stayHere = params.has('local');
  const autoProvider = stayHere ? undefined : providers.data?.providers.find((provider) => provider.providerId === providers.data?.autoRedirect);

  useEffect(() => {
    if (signedOut && autoProvider) window.location.assign(ssoStartHref(autoProvider.startUrl, next));
  }, [signedOut, autoProvider, next]);

  if (auth.loading) return <FullPageLoader />;
  if (auth.setupRequired) return <Navigate to="/setup" replace />;
  if (auth.current) return <Navigate to={next} replace />;

  const finish = async (answer: SignedIn) => {
    session.csrfToken = answer.csrfToken;
    await auth.refresh();
    navigate(next, { replace: true });
  };

  if (autoProvider) {
    return (
      <AuthCard title="Sign in" subtitle="Holdfast backup manager">
        <Text>Taking you to {autoProvider.name}…</Text>
        <Anchor component={Link} to={`/sign-in?local=1&next=${encodeURIComponent(next)}`} size="sm">
          Sign in another way
        </Anchor>
      </AuthCard>
    );
  }

  if (due) {
    return (
      <AuthCard title="Two-step sign-in" subtitle="Holdfast backup manager">
        <SecondFactorStep due={due} onSignedIn={finish} onCancel={() => setDue(null)} />
      </AuthCard>
    );
  }

  const ssoProviders = providers.data?.providers ?? [];
  return (
    <AuthCard title="Sign in" subtitle="Holdfast backup manager">
      {auth.emailLoginEnabled ? (
        <PasswordForm onSignedIn={finish} onSecondFactor={setDue} />
      ) : (
        <Text size="sm" data-testid="email-login-off">
          Password sign-in is switched off on this server. Use a passkey or single sign-on.
        </Text>
      )}
      {auth.emailLoginEnabled && <Divider label="or" labelPosition="center" />}
      <Stack gap="xs">
        <PasskeyButton label="Continue with a passkey" onSignedIn={finish} variant={auth.emailLoginEnabled ? 'default' : 'filled'} />
        <SsoButtons providers={ssoProviders} next={next} />
        {providers.error && <ErrorAlert error={providers.error} title="Single sign-on providers could not be loaded" />}
      </Stack>
    </AuthCard>
  );
}
