import { Alert, Anchor, Autocomplete, Button, Group, Modal, Radio, Select, Stack, Text, TextInput } from '@mantine/core';
import { HoldfastApiError } from '@holdfast/client';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../api/client';
import { ErrorAlert } from '../components/PageState';
import { startPointInTimeRestore } from './point-in-time-api';
import { buildMysqlRestoreBody, JOB_SERVER, refusedFieldOf, suggestTargetDatabase, type MysqlRestoreBody, type RefusedField, type ServerChoice } from './mysql-restore-request';
import { checkTarget, describeWindow, pickableSeconds, type RecoveryWindow, type TargetChoice } from './restore-target';
import { browserTimeZone, wallTimeOf, type WallTime } from './zoned-time';
import { WindowTimeFields } from './WindowTimeFields';

type TargetKind = 'time' | 'latest' | 'position' | 'gtid';

interface MysqlPointInTimeRestoreDialogProps {
  jobId: string;
  window: RecoveryWindow | null;
  /** The databases the job backs up: offered for "Database to restore" (empty when the job backs up all of them). */
  databases: string[];
  /** Where the new database can be built: the job's own server first (JOB_SERVER), then other sources of its adapter. */
  servers: ServerChoice[];
  onClose(): void;
}

/** Where a refusal of the API is shown: under the field it names, or in an alert above the buttons. */
function refusalOf(error: unknown): { field: RefusedField; message: string } | null {
  if (!error) return null;
  const message = errorMessage(error);
  return { field: error instanceof HoldfastApiError ? refusedFieldOf(error.status, message) : 'general', message };
}

/**
 * "Restore to a point in time…" for a MySQL/MariaDB job: one database of the base backup is built as a NEW database
 * on the source's own server (or another source's server of the same adapter: "Server"), as of a second inside the window, the latest archived binary log, a binary log
 * position or a GTID (that transaction included). No folder and no port (PostgreSQL's), no named restore points (PostgreSQL only). The database names are
 * checked as the API checks them; the API's refusals are shown under the field they are about; once queued the dialog
 * links to the run.
 */
export function MysqlPointInTimeRestoreDialog({ jobId, window, databases, servers, onClose }: MysqlPointInTimeRestoreDialogProps) {
  const timeZone = browserTimeZone();
  const seconds = window ? pickableSeconds(window) : null;
  const first = seconds ? wallTimeOf(seconds.first, timeZone) : null;
  const last = seconds ? wallTimeOf(seconds.last, timeZone) : null;
  const [kind, setKind] = useState<TargetKind>(seconds ? 'time' : 'latest');
  const [wall, setWall] = useState<WallTime>(last ?? { date: '', time: '' });
  const [position, setPosition] = useState('');
  const [gtid, setGtid] = useState('');
  const [database, setDatabase] = useState(databases.length === 1 ? databases[0]! : '');
  // The suggested name follows the database until the user types their own.
  const [ownTarget, setOwnTarget] = useState<string | null>(null);
  const [suggestedAt] = useState(() => new Date());
  const targetDatabase = ownTarget ?? (database.trim() ? suggestTargetDatabase(database, suggestedAt) : '');
  const [touched, setTouched] = useState({ database: false, targetDatabase: false });
  const [targetSourceId, setTargetSourceId] = useState(JOB_SERVER);
  const serverLabel = servers.find((server) => server.value === targetSourceId)?.label ?? "the job's own server";

  const choice: TargetChoice = kind === 'time' ? { type: 'time', wall } : kind === 'position' ? { type: 'position', position } : kind === 'gtid' ? { type: 'gtid', gtid } : { type: 'latest' };
  const checked = checkTarget(choice, window, timeZone, 'mysql-binlog');
  const built = checked.ok ? buildMysqlRestoreBody(checked.target, database, targetDatabase, targetSourceId) : buildMysqlRestoreBody({ type: 'latest' }, database, targetDatabase, targetSourceId);
  const problems = built.ok ? {} : built.problems;
  const isReady = checked.ok && built.ok;

  const restore = useMutation({ mutationFn: (body: MysqlRestoreBody) => startPointInTimeRestore(jobId, body) });
  const refusal = refusalOf(restore.error);
  const refusedAt = (field: RefusedField) => (refusal?.field === field ? refusal.message : undefined);
  const start = () => {
    if (!checked.ok || !built.ok) return;
    restore.mutate({ ...built.body, target: checked.target });
  };
  // A position or GTID field says nothing until something is typed in it.
  const isUntyped = (kind === 'position' && position === '') || (kind === 'gtid' && gtid === '');
  const targetError = !checked.ok && !isUntyped ? checked.message : refusedAt('target');
  const queued = restore.data?.executionId;

  return (
    <Modal opened onClose={onClose} title="Restore to a point in time" size="lg">
      <Stack>
        <Text size="sm">
          Holdfast fetches the base backup that precedes the target and the binary log up to it, and builds one database of the base as a new database on the source's own server or on another
          source's server of the same kind. The database it restores is not touched.
        </Text>
        <Text size="sm" data-testid="pitr-dialog-window">
          {window ? `Recoverable window: ${describeWindow(window, timeZone)}` : 'No recoverable window yet: take a base backup (run the job). Only "latest" can be asked for.'}
        </Text>
        <Radio.Group label="Restore to" value={kind} onChange={(value) => setKind(value as TargetKind)}>
          <Stack gap="xs" mt="xs">
            <Radio value="time" label="A date and time" disabled={!seconds} data-field="pitr-kind-time" />
            <Radio value="latest" label="The latest archived binary log" data-field="pitr-kind-latest" />
            <Radio value="position" label="A binary log position (file:offset)" data-field="pitr-kind-position" />
            <Radio value="gtid" label="A GTID (that transaction included)" data-field="pitr-kind-gtid" />
          </Stack>
        </Radio.Group>
        {kind === 'time' && first && last && (
          <WindowTimeFields first={first} last={last} wall={wall} onChange={setWall} timeZone={timeZone} timeHint="Transactions committed before this second are replayed" error={targetError} />
        )}
        {kind === 'position' && (
          <TextInput
            label="Binary log position"
            description="File and offset, as SHOW MASTER STATUS or mariadb-binlog print them, e.g. mysql-bin.000012:4567"
            value={position}
            error={targetError}
            onChange={(event) => setPosition(event.currentTarget.value)}
            data-field="pitr-position"
            required
          />
        )}
        {kind === 'gtid' && (
          <TextInput
            label="GTID"
            description="A MariaDB GTID, domain-server-sequence, e.g. 0-1-352 (SELECT @@last_gtid after the commit): every transaction up to and including it is replayed, none logged after it"
            value={gtid}
            error={targetError}
            onChange={(event) => {
              setGtid(event.currentTarget.value);
              restore.reset();
            }}
            data-field="pitr-gtid"
            required
          />
        )}
        {kind === 'latest' && refusedAt('target') && (
          <Text size="sm" c="red" role="alert">
            {refusedAt('target')}
          </Text>
        )}
        <Autocomplete
          label="Database to restore"
          description={databases.length > 0 ? 'A database of the base backup: the job backs up the ones listed' : 'A database of the base backup (the job backs up every database of the server)'}
          data={databases}
          value={database}
          error={(touched.database ? problems.database : undefined) ?? refusedAt('database')}
          onChange={(value) => {
            setDatabase(value);
            restore.reset();
          }}
          onBlur={() => setTouched({ ...touched, database: true })}
          data-field="pitr-database"
          required
        />
        <Select
          label="Server"
          description="Where the new database is built: the job's own server, or another source of the same kind (its account needs to create databases and replay a binary log)"
          data={servers}
          value={targetSourceId}
          allowDeselect={false}
          error={refusedAt('targetSourceId')}
          onChange={(value) => {
            setTargetSourceId(value ?? JOB_SERVER);
            restore.reset();
          }}
          data-field="pitr-target-source"
        />
        <TextInput
          label="New database"
          description="Built on the server chosen above; it must not exist there yet. 1 to 64 letters, digits, _, $ or -."
          value={targetDatabase}
          error={((touched.targetDatabase || ownTarget !== null) && targetDatabase ? problems.targetDatabase : undefined) ?? refusedAt('targetDatabase')}
          onChange={(event) => {
            setOwnTarget(event.currentTarget.value);
            restore.reset();
          }}
          onBlur={() => setTouched({ ...touched, targetDatabase: true })}
          data-field="pitr-target-database"
          required
        />
        {isReady && !queued && (
          <Alert color="blue" variant="light" data-testid="pitr-restore-summary">
            Restore the database {database.trim()} {checked.summary} into the new database {targetDatabase.trim()}
            {targetSourceId !== JOB_SERVER ? ` on ${serverLabel}` : ''}.
          </Alert>
        )}
        {refusal?.field === 'general' && <ErrorAlert error={restore.error} title="Restore refused" />}
        {queued && (
          <Alert color="green" title="Restore queued" data-testid="pitr-restore-queued">
            <Anchor component={Link} to={`/runs/${queued}`} data-testid="pitr-restore-run-link">
              Follow the run
            </Anchor>
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {queued ? 'Close' : 'Cancel'}
          </Button>
          {!queued && (
            <Button onClick={start} disabled={!isReady} loading={restore.isPending} data-testid="pitr-restore-start">
              Start restore
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}
