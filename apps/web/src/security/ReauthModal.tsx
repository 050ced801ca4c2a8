import { Button, Group, Modal, PasswordInput, SegmentedControl, Stack, Text, TextInput } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert } from '../components/PageState';

/** What the server accepts as proof before a change to sign-in protection: the password or a current code. */
export type Reauthentication = { password: string } | { code: string };

interface Props {
  opened: boolean;
  title: string;
  description: string;
  confirmLabel: string;
  danger?: boolean;
  onClose(): void;
  /** Sends the change with the proof; an error (wrong password, wrong code) stays in the dialog. */
  action(proof: Reauthentication): Promise<unknown>;
}

/**
 * Asks for the password (or, when password sign-in is off or the user prefers, a current authenticator code)
 * before a change that weakens or reveals sign-in protection.
 */
export function ReauthModal({ opened, title, description, confirmLabel, danger, onClose, action }: Props) {
  const auth = useAuth();
  const [method, setMethod] = useState<'password' | 'code'>(auth.emailLoginEnabled ? 'password' : 'code');
  const [value, setValue] = useState('');
  const run = useMutation({ mutationFn: action });
  const close = () => {
    setValue('');
    run.reset();
    onClose();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!value.trim()) return;
    run.mutate(method === 'password' ? { password: value } : { code: value.replace(/\s+/g, '') }, { onSuccess: close });
  };
  return (
    <Modal opened={opened} onClose={close} title={title} centered closeButtonProps={{ 'aria-label': 'Close' }}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Text size="sm">{description}</Text>
          {auth.emailLoginEnabled && (
            <SegmentedControl
              aria-label="Confirm with"
              value={method}
              onChange={(next) => {
                setMethod(next as 'password' | 'code');
                setValue('');
              }}
              data={[
                { value: 'password', label: 'Password' },
                { value: 'code', label: 'Authenticator code' },
              ]}
            />
          )}
          {method === 'password' ? (
            <PasswordInput label="Your password" autoComplete="current-password" required value={value} onChange={(event) => setValue(event.currentTarget.value)} data-autofocus data-field="reauth-password" />
          ) : (
            <TextInput
              label="Current authenticator code"
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              value={value}
              onChange={(event) => setValue(event.currentTarget.value)}
              data-autofocus
              data-field="reauth-code"
            />
          )}
          {run.error && <ErrorAlert error={run.error} title="Not confirmed" />}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button type="submit" color={danger ? 'red' : undefined} loading={run.isPending} disabled={!value.trim()}>
              {confirmLabel}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
