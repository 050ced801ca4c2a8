import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { Button, Center, Stack } from '@mantine/core';
import { ErrorAlert, FullPageLoader } from '../components/PageState';
import { useAuth } from './AuthProvider';

/** Sends visitors to first-run setup (no user yet) or sign-in (no session), keeping where they wanted to go. */
export function AuthGate({ children }: { children: ReactNode }) {
  const auth = useAuth();
  const location = useLocation();
  if (auth.loading) return <FullPageLoader />;
  // A failed session read (5xx, 429) is not a sign-out: say so instead of sending a signed-in user to sign-in.
  if (auth.error && auth.current === undefined) {
    return (
      <Center h="100vh" p="md">
        <Stack maw={520}>
          <ErrorAlert error={auth.error} title="Your session could not be read" />
          <Button onClick={() => void auth.refresh()}>Try again</Button>
        </Stack>
      </Center>
    );
  }
  if (auth.setupRequired) return <Navigate to="/setup" replace />;
  if (!auth.current) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return <>{children}</>;
}
