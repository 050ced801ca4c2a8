import { Button, Group, Modal, PasswordInput, SegmentedControl, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
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
  // Signed-in pages do not read the public status; this dialog needs to know whether password sign-in is on.
  const status = useQuery({ queryKey: ['auth', 'status'], queryFn: () => unwrap(api.GET('/api/auth/status')), staleTime: Infinity });
  const emailLoginEnabled = status.data?.emailLoginEnabled ?? true;
  const [method, setMethod] = useState<'password' | 'code'>(emailLoginEnabled ? 'password' : 'code');
  useEffect(() => {
    if (!emailLoginEnabled) setMethod('code');
  }, [emailLoginEnabled]);
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
          {emailLoginEnabled && (
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
