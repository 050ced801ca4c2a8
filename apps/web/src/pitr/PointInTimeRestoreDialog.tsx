import { Alert, Button, Group, Modal, NumberInput, PasswordInput, Radio, Stack, Switch, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert } from '../components/PageState';
import { startPointInTimeRestore, type PointInTimeRestoreBody } from './point-in-time-api';
import { checkTarget, describeWindow, pickableSeconds, servePortProblem, targetPathProblem, type RecoveryWindow, type TargetChoice } from './restore-target';
import { browserTimeZone, wallTimeOf, type WallTime } from './zoned-time';
import { WindowTimeFields } from './WindowTimeFields';

type TargetKind = TargetChoice['type'];

interface PointInTimeRestoreDialogProps {
  jobId: string;
  window: RecoveryWindow | null;
  encryptionProfileId: string | null;
  onClose(): void;
}

/** Whether the job's encryption profile is public-key (age): Holdfast then needs the private key to read the backup. */
function usePublicKeyProfile(encryptionProfileId: string | null): boolean | undefined {
  const canReadVault = useAuth().can('vault:read');
  const vault = useQuery({ queryKey: ['vault'], queryFn: () => unwrap(api.GET('/api/vault')), enabled: Boolean(encryptionProfileId) && canReadVault });
  if (!encryptionProfileId) return false;
  // Unknown without vault:read: the field is then offered as optional.
  return vault.data ? vault.data.find((profile) => profile.id === encryptionProfileId)?.kind === 'public-key' : undefined;
}

/**
 * "Restore to a point in time…": a date and time (to the second, in the user's zone) inside the recoverable window,
 * or the latest archived WAL, or (advanced) a WAL position or a named restore point; the folder on the Holdfast
 * server to build the cluster in, an optional port to serve it on; a summary; then the run's own page.
 */
export function PointInTimeRestoreDialog({ jobId, window, encryptionProfileId, onClose }: PointInTimeRestoreDialogProps) {
  const navigate = useNavigate();
  const timeZone = browserTimeZone();
  const seconds = window ? pickableSeconds(window) : null;
  const first = seconds ? wallTimeOf(seconds.first, timeZone) : null;
  const last = seconds ? wallTimeOf(seconds.last, timeZone) : null;
  const [kind, setKind] = useState<TargetKind>(seconds ? 'time' : 'latest');
  const [advanced, setAdvanced] = useState(false);
  const [wall, setWall] = useState<WallTime>(last ?? { date: '', time: '' });
  const [position, setPosition] = useState('');
  const [name, setName] = useState('');
  const [targetPath, setTargetPath] = useState('');
  const [servePort, setServePort] = useState<number | string>('');
  const [privateKey, setPrivateKey] = useState('');
  const [touched, setTouched] = useState({ path: false });
  const isPublicKey = usePublicKeyProfile(encryptionProfileId);

  const choice: TargetChoice = kind === 'time' ? { type: 'time', wall } : kind === 'position' ? { type: 'position', position } : kind === 'name' ? { type: 'name', name } : { type: 'latest' };
  const checked = checkTarget(choice, window, timeZone);
  const pathProblem = targetPathProblem(targetPath);
  const portProblem = servePortProblem(servePort);
  const keyMissing = isPublicKey === true && privateKey.trim() === '';
  const isReady = checked.ok && !pathProblem && !portProblem && !keyMissing;

  const restore = useMutation({
    mutationFn: (body: PointInTimeRestoreBody) => startPointInTimeRestore(jobId, body),
    onSuccess: (answer) => navigate(`/runs/${answer.executionId}`),
  });
  const start = () => {
    if (!checked.ok || !isReady) return;
    restore.mutate({
      target: checked.target,
      targetPath: targetPath.trim(),
      ...(servePort !== '' ? { servePort: Number(servePort) } : {}),
      ...(privateKey.trim() ? { privateKey: privateKey.trim() } : {}),
    });
  };
  const timeError = kind === 'time' && !checked.ok ? checked.message : undefined;

  return (
    <Modal opened onClose={onClose} title="Restore to a point in time" size="lg">
      <Stack>
        <Text size="sm">
          Holdfast fetches the base backup that precedes the target and the WAL up to it, and builds a new PostgreSQL data directory on the Holdfast server. The source cluster is not touched.
        </Text>
        <Text size="sm" data-testid="pitr-dialog-window">
          {window ? `Recoverable window: ${describeWindow(window, timeZone)}` : 'No recoverable window yet: take a base backup (run the job). Only "latest" can be asked for.'}
        </Text>
        <Radio.Group label="Restore to" value={kind} onChange={(value) => setKind(value as TargetKind)}>
          <Stack gap="xs" mt="xs">
            <Radio value="time" label="A date and time" disabled={!seconds} data-field="pitr-kind-time" />
            <Radio value="latest" label="The latest archived WAL" data-field="pitr-kind-latest" />
            {advanced && <Radio value="position" label="A WAL position (LSN)" data-field="pitr-kind-position" />}
            {advanced && <Radio value="name" label="A named restore point (pg_create_restore_point)" data-field="pitr-kind-name" />}
          </Stack>
        </Radio.Group>
        <Switch
          label="Advanced targets"
          checked={advanced}
          onChange={(event) => {
            setAdvanced(event.currentTarget.checked);
            if (!event.currentTarget.checked && (kind === 'position' || kind === 'name')) setKind(seconds ? 'time' : 'latest');
          }}
          data-field="pitr-advanced"
        />
        {kind === 'time' && first && last && (
          <WindowTimeFields first={first} last={last} wall={wall} onChange={setWall} timeZone={timeZone} timeHint="In your time zone" error={timeError} />
        )}
        {kind === 'position' && (
          <TextInput label="WAL position (LSN)" description="As pg_current_wal_lsn() prints it, e.g. 0/3000028" value={position} error={position && !checked.ok ? checked.message : undefined} onChange={(event) => setPosition(event.currentTarget.value)} data-field="pitr-position" required />
        )}
        {kind === 'name' && <TextInput label="Restore point name" description="The name given to pg_create_restore_point()" value={name} onChange={(event) => setName(event.currentTarget.value)} data-field="pitr-name" required />}
        <TextInput
          label="Target path"
          description="An absolute path on the Holdfast server (not your computer): a folder that does not exist yet (its parent must) or an empty one, inside the folders Holdfast may write to. The data directory is built there."
          placeholder="/restore/shop-1403"
          value={targetPath}
          error={touched.path ? (pathProblem ?? undefined) : undefined}
          onChange={(event) => setTargetPath(event.currentTarget.value)}
          onBlur={() => setTouched({ path: true })}
          data-field="pitr-target-path"
          required
        />
        <NumberInput
          label="Serve on port (optional)"
          description="Start PostgreSQL on 127.0.0.1 at this port after recovery, to check or use the copy (logins as on the source). Empty: the server is stopped and the folder holds a data directory ready to start."
          min={1024}
          max={65535}
          value={servePort}
          error={portProblem ?? undefined}
          onChange={setServePort}
          data-field="pitr-serve-port"
        />
        {isPublicKey !== false && (
          <PasswordInput
            label={isPublicKey ? 'Private key' : 'Private key (backups of a public-key profile only)'}
            description="AGE-SECRET-KEY-1… from your age key file: the job's encryption profile is public-key, so Holdfast cannot read the backup without it. Sent with this request only; never stored."
            autoComplete="off"
            value={privateKey}
            onChange={(event) => setPrivateKey(event.currentTarget.value)}
            required={isPublicKey === true}
            data-field="private-key"
          />
        )}
        {checked.ok && !pathProblem && (
          <Alert color="blue" variant="light" data-testid="pitr-restore-summary">
            Restore the cluster {checked.summary} into {targetPath.trim()}
            {servePort !== '' && !portProblem ? `, then serve it on port ${servePort}` : ''}.
            {checked.note && (
              <Text size="sm" mt={4}>
                {checked.note}
              </Text>
            )}
          </Alert>
        )}
        {restore.error && <ErrorAlert error={restore.error} title="Restore refused" />}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={start} disabled={!isReady} loading={restore.isPending} data-testid="pitr-restore-start">
            Start restore
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
