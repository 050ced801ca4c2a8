import { Button, Code, Group, Paper, Stack, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client';
import { withStepUp } from './StepUp';
import { ErrorAlert, QueryState } from '../components/PageState';
import { QrCode } from '../components/QrCode';
import { ToneBadge } from '../components/StatusBadge';
import { BackupCodes } from './BackupCodes';
import { ReauthModal, type Reauthentication } from './ReauthModal';

const STATUS_KEY = ['two-factor'];

/**
 * Two-factor sign-in with an authenticator app (TOTP): set up with a QR code or the manual key, turn on with a first
 * code, see the backup codes once, replace them, turn it off. Replacing and turning off ask for the password again.
 */
export function TwoFactorPanel() {
  const queryClient = useQueryClient();
  const status = useQuery({ queryKey: STATUS_KEY, queryFn: () => unwrap(api.GET('/api/auth/two-factor')) });
  const [enrollment, setEnrollment] = useState<{ otpauthUri: string; manualKey: string } | null>(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState<string[] | null>(null);
  const [dialog, setDialog] = useState<'regenerate' | 'disable' | null>(null);
  const changed = async () => {
    await queryClient.invalidateQueries({ queryKey: STATUS_KEY });
    // The session's user carries twoFactorEnabled.
    await queryClient.invalidateQueries({ queryKey: ['auth', 'session'] });
  };

  const enroll = useMutation({
    // Changing one's second factors while having one needs a fresh one (issue 45.4): asked for when the server says so.
    mutationFn: () => withStepUp(() => unwrap(api.POST('/api/auth/two-factor/enroll', { body: {} }))),
    onSuccess: (answer) => {
      setEnrollment(answer);
      setCode('');
    },
  });
  const confirm = useMutation({
    mutationFn: (first: string) => unwrap(api.POST('/api/auth/two-factor/confirm', { body: { code: first } })),
    onSuccess: async (answer) => {
      setEnrollment(null);
      setCodes(answer.backupCodes);
      notifications.show({ color: 'green', message: 'Two-factor sign-in is on' });
      await changed();
    },
  });
  const regenerate = async (proof: Reauthentication) => {
    const answer = await withStepUp(() => unwrap(api.POST('/api/auth/two-factor/backup-codes', { body: proof })));
    setCodes(answer.backupCodes);
    await changed();
  };
  const disable = async (proof: Reauthentication) => {
    await withStepUp(() => unwrap(api.POST('/api/auth/two-factor/disable', { body: proof })));
    setCodes(null);
    notifications.show({ color: 'green', message: 'Two-factor sign-in is off' });
    await changed();
  };
  const submitCode = (event: FormEvent) => {
    event.preventDefault();
    const first = code.replace(/\s+/g, '');
    if (first) confirm.mutate(first);
  };

  const state = status.data;
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="two-factor-title">
      <Stack>
        <Group justify="space-between">
          <Title order={3} size="h4" id="two-factor-title">
            Authenticator app
          </Title>
          {state && (
            <ToneBadge color={state.enabled ? 'green' : 'gray'} data-testid="two-factor-status">
              {state.enabled ? 'On' : 'Off'}
            </ToneBadge>
          )}
        </Group>
        <QueryState isPending={status.isPending} error={status.error}>
          {codes && <BackupCodes codes={codes} onDone={() => setCodes(null)} />}
          {state?.enabled && (
            <Stack gap="xs">
              <Text size="sm">
                Signing in asks for a code from your authenticator app after the password.{' '}
                <span data-testid="backup-codes-remaining">
                  {state.backupCodesRemaining} of 10 backup codes left.
                </span>
              </Text>
              <Group gap="xs">
                <Button variant="default" onClick={() => setDialog('regenerate')}>
                  New backup codes
                </Button>
                <Button variant="default" color="red" onClick={() => setDialog('disable')}>
                  Turn off
                </Button>
              </Group>
            </Stack>
          )}
          {state && !state.enabled && !enrollment && (
            <Stack gap="xs" align="flex-start">
              <Text size="sm">Add a second step to signing in: a six-digit code from an authenticator app on your phone.</Text>
              <Button onClick={() => enroll.mutate()} loading={enroll.isPending}>
                {state.enrollmentPending ? 'Start the setup again' : 'Set up authenticator app'}
              </Button>
            </Stack>
          )}
          {enrollment && (
            <form onSubmit={submitCode} noValidate>
              <Stack>
                <Text size="sm">Scan the code with your authenticator app, or type the key into it by hand. Then enter the code the app shows.</Text>
                <Group align="flex-start" gap="lg">
                  <QrCode value={enrollment.otpauthUri} label="QR code for your authenticator app" />
                  <Stack gap={4}>
                    <Text size="sm" fw={500}>
                      Key for manual entry
                    </Text>
                    <Code fz="md" data-testid="totp-manual-key">
                      {enrollment.manualKey}
                    </Code>
                    <Text size="xs" c="dimmed">
                      Time-based, 6 digits, every 30 seconds (SHA-1)
                    </Text>
                  </Stack>
                </Group>
                <TextInput
                  label="Code from the app"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  maxLength={12}
                  required
                  value={code}
                  onChange={(event) => setCode(event.currentTarget.value)}
                  data-field="totp-confirm-code"
                  maw={240}
                />
                {confirm.error && <ErrorAlert error={confirm.error} title="Not turned on" />}
                <Group gap="xs">
                  <Button type="submit" loading={confirm.isPending} disabled={!code.trim()}>
                    Turn on
                  </Button>
                  <Button variant="default" onClick={() => setEnrollment(null)}>
                    Cancel
                  </Button>
                </Group>
              </Stack>
            </form>
          )}
          {enroll.error && <ErrorAlert error={enroll.error} title="Could not start the setup" />}
        </QueryState>
      </Stack>
      <ReauthModal
        opened={dialog === 'regenerate'}
        title="New backup codes"
        description="The ten new codes replace the old ones, which stop working. Confirm it is you."
        confirmLabel="Make new codes"
        onClose={() => setDialog(null)}
        action={regenerate}
      />
      <ReauthModal
        opened={dialog === 'disable'}
        title="Turn off two-factor sign-in"
        description="Signing in will then need only your password (or a passkey). Confirm it is you."
        confirmLabel="Turn off"
        danger
        onClose={() => setDialog(null)}
        action={disable}
      />
    </Paper>
  );
}
