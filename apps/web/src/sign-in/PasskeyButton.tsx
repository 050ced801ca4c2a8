import { Alert, Button } from '@mantine/core';
import { useState } from 'react';
import { passkeyErrorMessage, passkeysAvailable, signInWithPasskey } from '../api/passkeys';
import { ErrorAlert } from '../components/PageState';
import type { SignedIn } from './types';

/**
 * Runs a passkey sign-in. On the first page it is passwordless; after a correct password (a sign-in waiting for its
 * second factor) the server narrows it to that account's passkeys.
 */
export function PasskeyButton({ label, onSignedIn, variant = 'default' }: { label: string; onSignedIn(answer: SignedIn): Promise<void>; variant?: 'default' | 'filled' }) {
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  if (!passkeysAvailable()) return null;
  const run = async () => {
    setFailure(undefined);
    setBusy(true);
    try {
      await onSignedIn(await signInWithPasskey());
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };
  const plain = failure === undefined ? undefined : passkeyErrorMessage(failure);
  return (
    <>
      {failure !== undefined &&
        (plain ? (
          <Alert color="red" title="Passkey sign-in failed" role="alert">
            {plain}
          </Alert>
        ) : (
          <ErrorAlert error={failure} title="Passkey sign-in failed" />
        ))}
      <Button variant={variant} onClick={run} loading={busy} fullWidth>
        {label}
      </Button>
    </>
  );
}
