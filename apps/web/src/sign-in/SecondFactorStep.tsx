import { Anchor, Button, Divider, Stack, Text, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorAlert } from '../components/PageState';
import { PasskeyButton } from './PasskeyButton';
import type { SecondFactorDue, SignedIn } from './types';

/**
 * The second step of a password sign-in: a code from the authenticator app, a backup code, or a passkey — whichever
 * the account has turned on. The pending sign-in rides in an HttpOnly cookie the browser sends by itself.
 */
export function SecondFactorStep({ due, onSignedIn, onCancel }: { due: SecondFactorDue; onSignedIn(answer: SignedIn): Promise<void>; onCancel(): void }) {
  const hasCodes = due.methods.includes('totp');
  const [mode, setMode] = useState<'totp' | 'backup-code'>(hasCodes ? 'totp' : 'backup-code');
  const [value, setValue] = useState('');
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const entered = value.trim();
    if (!entered) return;
    setFailure(undefined);
    setBusy(true);
    try {
      const body = mode === 'totp' ? { code: entered.replace(/\s+/g, '') } : { backupCode: entered };
      await onSignedIn(await unwrap(api.POST('/api/auth/two-factor/verify', { body })));
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };
  const switchTo = (next: 'totp' | 'backup-code') => {
    setMode(next);
    setValue('');
    setFailure(undefined);
  };

  return (
    <Stack>
      <Text size="sm">Your password was right. Finish signing in with your second factor within five minutes.</Text>
      {(hasCodes || due.methods.includes('backup-code')) && (
        <form onSubmit={submit} noValidate>
          <Stack>
            {failure !== undefined && <ErrorAlert error={failure} title="Not signed in" />}
            {mode === 'totp' ? (
              <TextInput
                label="Code from your authenticator app"
                inputMode="numeric"
                autoComplete="one-time-code"
                maxLength={12}
                required
                value={value}
                onChange={(event) => setValue(event.currentTarget.value)}
                data-autofocus
                data-field="second-factor-code"
              />
            ) : (
              <TextInput
                label="Backup code"
                autoComplete="off"
                maxLength={20}
                required
                value={value}
                onChange={(event) => setValue(event.currentTarget.value)}
                data-field="second-factor-backup-code"
              />
            )}
            <Button type="submit" loading={busy} disabled={!value.trim()}>
              Verify
            </Button>
            {hasCodes && due.methods.includes('backup-code') && (
              <Anchor component="button" type="button" size="sm" onClick={() => switchTo(mode === 'totp' ? 'backup-code' : 'totp')}>
                {mode === 'totp' ? 'Use a backup code instead' : 'Use the authenticator app instead'}
              </Anchor>
            )}
          </Stack>
        </form>
      )}
      {due.methods.includes('passkey') && (
        <>
          {(hasCodes || due.methods.includes('backup-code')) && <Divider label="or" labelPosition="center" />}
          <PasskeyButton label="Use a passkey" onSignedIn={onSignedIn} variant={hasCodes ? 'default' : 'filled'} />
        </>
      )}
      <Button variant="subtle" onClick={onCancel}>
        Back to the password
      </Button>
    </Stack>
  );
}
