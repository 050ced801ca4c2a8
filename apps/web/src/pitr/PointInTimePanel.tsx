import { Alert, Button, Group, List, Paper, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { useAuth } from '../auth/AuthProvider';
import { formatBytes } from '../components/format';
import { ErrorAlert } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';
import { usePointInTime, type PointInTimeView } from './point-in-time-api';
import { MysqlPointInTimeRestoreDialog } from './MysqlPointInTimeRestoreDialog';
import { serverChoicesOf, type ServerChoice } from './mysql-restore-request';
import { PointInTimeRestoreDialog } from './PointInTimeRestoreDialog';
import { describeAge, describeWindow, logKindOf, logWord, recoveryPointTone } from './restore-target';
import { browserTimeZone, formatInZone } from './zoned-time';

/** The recovery point the docs aim for is the flush interval plus 10 s (docs/pitr.md); amber past it. */
const DEFAULT_FLUSH_SECONDS = 10;

const STATE_WORDS: Record<string, string> = {
  streaming: 'Streaming',
  retrying: 'Retrying a destination',
  stopped: 'Stopped',
  failed: 'Failed',
  stale: 'Stale (the streaming process stopped reporting)',
  'not-started': 'Not started',
};

interface PointInTimePanelProps {
  jobId: string;
  /** The job's encryption profile: a public-key one needs the private key to restore. */
  encryptionProfileId: string | null;
  /** The source's `walFlushIntervalSeconds` (`binlogFlushIntervalSeconds` for MySQL) when the caller can read it. */
  flushIntervalSeconds?: number;
  /** The databases the job backs up, offered by the MySQL restore dialog. */
  databases?: string[];
  /** The servers a MySQL restore can build its new database on (serverChoicesOf): the job's own first. */
  servers?: ServerChoice[];
}

/**
 * "Point-in-time recovery" on a job's page (issue 43): the recoverable window, the recovery point, who streams the
 * WAL, the archive's size and its gaps, refreshed every ten seconds; and the restore dialog. Renders nothing for a
 * job whose source is not in physical mode (`enabled: false`) or without history:read on the job.
 */
export function PointInTimePanel({ jobId, encryptionProfileId, flushIntervalSeconds, databases = [], servers = [] }: PointInTimePanelProps) {
  const auth = useAuth();
  const canRead = auth.canOn('history:read', 'job', jobId);
  // storage:restore is granted on destinations; holding it anywhere shows the button and the server decides.
  const canRestore = auth.can('storage:restore');
  const pointInTime = usePointInTime(jobId, canRead);
  const [restoring, setRestoring] = useState(false);
  const timeZone = browserTimeZone();
  if (!canRead || (!pointInTime.data && !pointInTime.error)) return null;
  if (pointInTime.error && !pointInTime.data) {
    return (
      <Paper withBorder p="md" data-testid="pitr-panel">
        <Title order={3} size="h4" mb="sm">
          Point-in-time recovery
        </Title>
        <ErrorAlert error={pointInTime.error} title="Could not read the recoverable window" />
      </Paper>
    );
  }
  const view = pointInTime.data!.data;
  if (!view.enabled) return null;
  const window = view.window ?? null;
  const logKind = logKindOf(view.logKind);
  const log = logWord(logKind);
  return (
    <Paper withBorder p="md" data-testid="pitr-panel">
      <Group justify="space-between" mb="sm">
        <Title order={3} size="h4">
          Point-in-time recovery
        </Title>
        {canRestore && (
          <Button variant="default" size="xs" onClick={() => setRestoring(true)} data-testid="pitr-restore-open">
            Restore to a point in time…
          </Button>
        )}
      </Group>
      <Stack gap="sm">
        {window ? (
          <div>
            <Text size="sm" fw={500}>
              Recoverable window
            </Text>
            <Text size="sm" data-testid="pitr-window">
              {describeWindow(window, timeZone)}
            </Text>
            <Text size="xs" c="dimmed">
              {logKind === 'mysql-binlog' ? 'Any second in this range can be restored.' : `Any second in this range can be restored (timeline ${window.timeline}).`}
            </Text>
          </div>
        ) : (
          <Alert color="gray" variant="outline" data-testid="pitr-no-window" title="No recoverable window yet">
            {view.segments
              ? `No base backup is followed by an unbroken archived ${log} (a base backup taken before a gap cannot reach past it). Take a new base backup: run the job.`
              : `The ${log} is archived once the job has a base backup. Take a base backup: run the job.`}
          </Alert>
        )}
        <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm">
          <RecoveryPoint view={view} log={log} warnAfterSeconds={(flushIntervalSeconds ?? DEFAULT_FLUSH_SECONDS) + 10} />
          <Streaming view={view} log={log} timeZone={timeZone} />
          <div>
            <Text size="sm" fw={500}>
              Archive
            </Text>
            <Text size="sm" data-testid="pitr-archive">
              {view.segments ?? 0} {log} {view.segments === 1 ? 'piece' : 'pieces'}, {formatBytes(view.storedBytes ?? 0)} (one copy)
            </Text>
          </div>
        </SimpleGrid>
        {view.gaps && view.gaps.length > 0 && (
          <Alert color="yellow" title={`${view.gaps.length === 1 ? 'A gap' : `${view.gaps.length} gaps`} in the archived ${log}`} data-testid="pitr-gaps">
            <List size="sm">
              {view.gaps.map((gap) => (
                <List.Item key={`${gap.after}-${gap.next}`}>
                  {gap.missing} {logKind === 'mysql-binlog' ? (gap.missing === 1 ? 'file' : 'files') : gap.missing === 1 ? 'segment' : 'segments'} missing between {gap.after} and {gap.next}
                </List.Item>
              ))}
            </List>
            <Text size="sm" mt="xs">
              A gap splits the window: instants before it cannot be restored from base backups taken after it, and base backups taken before it cannot reach past it.
            </Text>
          </Alert>
        )}
      </Stack>
      {restoring &&
        (logKind === 'mysql-binlog' ? (
          <MysqlPointInTimeRestoreDialog jobId={jobId} window={window} databases={databases} servers={servers.length > 0 ? servers : serverChoicesOf([], undefined)} onClose={() => setRestoring(false)} />
        ) : (
          <PointInTimeRestoreDialog jobId={jobId} window={window} encryptionProfileId={encryptionProfileId} onClose={() => setRestoring(false)} />
        ))}
    </Paper>
  );
}

function RecoveryPoint({ view, log, warnAfterSeconds }: { view: PointInTimeView; log: string; warnAfterSeconds: number }) {
  const seconds = view.recoveryPointSeconds;
  const state = view.streaming?.state;
  const tone = recoveryPointTone(seconds, state, warnAfterSeconds);
  return (
    <div>
      <Text size="sm" fw={500}>
        Recovery point
      </Text>
      <Group gap="xs">
        <ToneBadge color={tone} data-testid="pitr-recovery-point" data-status={tone}>
          {seconds === null || seconds === undefined ? 'none yet' : describeAge(seconds)}
        </ToneBadge>
      </Group>
      <Text size="xs" c="dimmed">
        {tone === 'red' ? `The ${log} is not streaming: the recovery point grows until it does.` : tone === 'yellow' ? `Older than the ${warnAfterSeconds} s aimed for.` : `Newest archived ${log}.`}
      </Text>
    </div>
  );
}

function Streaming({ view, log, timeZone }: { view: PointInTimeView; log: string; timeZone: string }) {
  const streaming = view.streaming;
  const state = streaming?.state ?? 'not-started';
  return (
    <div>
      <Text size="sm" fw={500}>
        {log === 'WAL' ? 'WAL stream' : 'Binary log stream'}
      </Text>
      <ToneBadge color={state === 'streaming' ? 'green' : state === 'retrying' ? 'yellow' : 'red'} data-testid="pitr-stream-state" data-status={state}>
        {STATE_WORDS[state] ?? state}
      </ToneBadge>
      {streaming?.process && (
        <Text size="xs" c="dimmed" data-testid="pitr-streamer">
          by {streaming.process.host} (pid {streaming.process.pid}){streaming.since ? ` since ${formatInZone(Date.parse(streaming.since), timeZone)}` : ''}
        </Text>
      )}
      {streaming?.lastError && (
        <Text size="xs" c="red" role="alert">
          {streaming.lastError}
        </Text>
      )}
    </div>
  );
}
