import { Button, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { HoldfastApiError } from '@holdfast/client';
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { passkeyErrorMessage, passkeysAvailable, stepUpWithPasskey } from '../api/passkeys';
import { ErrorAlert } from '../components/PageState';

/** What the server says when a protected action needs a fresh second factor (issue 45.4). */
interface StepUpRefusal {
  methods: Array<'totp' | 'passkey'>;
}

/** The refusal's facts when `error` is the 403 `SECOND_FACTOR_REQUIRED`, else null. */
function stepUpRefusalOf(error: unknown): StepUpRefusal | null {
  if (!(error instanceof HoldfastApiError) || error.status !== 403) return null;
  const details = (error.body as { details?: { code?: unknown; methods?: unknown } } | null)?.details;
  if (details?.code !== 'SECOND_FACTOR_REQUIRED') return null;
  return { methods: Array.isArray(details.methods) ? (details.methods as StepUpRefusal['methods']) : ['totp'] };
}

type Pending = { refusal: StepUpRefusal; settle(isConfirmed: boolean): void };
let showPrompt: ((pending: Pending) => void) | undefined;

/**
 * Runs a protected action (deleting a backup, destination or encryption profile, unlocking, changing retention);
 * when the server asks for a fresh second factor, asks the user for it once and runs the action again.
 */
export async function withStepUp<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    const refusal = stepUpRefusalOf(error);
    if (!refusal || !showPrompt) throw error;
    const prompt = showPrompt;
    const isConfirmed = await new Promise<boolean>((settle) => prompt({ refusal, settle }));
    if (!isConfirmed) throw error;
    return action();
  }
}

/** The one step-up dialog of the app (mounted once beside the router). */
export function StepUpDialog() {
  const [pending, setPending] = useState<Pending | null>(null);
  const [code, setCode] = useState('');
  useEffect(() => {
    showPrompt = (next) => setPending(next);
    return () => {
      showPrompt = undefined;
    };
  }, []);
  const confirm = useMutation({
    mutationFn: (proof: { code: string } | { backupCode: string } | 'passkey') => (proof === 'passkey' ? stepUpWithPasskey() : unwrap(api.POST('/api/auth/step-up', { body: proof }))),
  });
  const finish = (isConfirmed: boolean) => {
    pending?.settle(isConfirmed);
    setPending(null);
    setCode('');
    confirm.reset();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!code.trim()) return;
    const typed = code.replace(/\s+/g, '');
    // Six digits are an authenticator code; anything else (letters, a dash) is a backup code.
    confirm.mutate(/^\d{6}$/.test(typed) ? { code: typed } : { backupCode: typed }, { onSuccess: () => finish(true) });
  };
  const methods = pending?.refusal.methods ?? [];
  const canUsePasskey = methods.includes('passkey') && passkeysAvailable();
  return (
    <Modal opened={pending !== null} onClose={() => finish(false)} title="Confirm it is you" centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Text size="sm">This action can lose backups. Confirm with your second factor; it then stays confirmed for a few minutes.</Text>
          {methods.includes('totp') && (
            <TextInput
              label="Current authenticator code (or a backup code)"
              inputMode="numeric"
              autoComplete="one-time-code"
              value={code}
              onChange={(event) => setCode(event.currentTarget.value)}
              data-autofocus
              data-field="step-up-code"
            />
          )}
          {confirm.error && <ErrorAlert error={passkeyErrorMessage(confirm.error) ? new Error(passkeyErrorMessage(confirm.error)) : confirm.error} title="Not confirmed" />}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => finish(false)}>
              Cancel
            </Button>
            {canUsePasskey && (
              <Button variant="default" loading={confirm.isPending} onClick={() => confirm.mutate('passkey', { onSuccess: () => finish(true) })}>
                Use a passkey
              </Button>
            )}
            {methods.includes('totp') && (
              <Button type="submit" color="red" loading={confirm.isPending} disabled={!code.trim()}>
                Confirm
              </Button>
            )}
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
