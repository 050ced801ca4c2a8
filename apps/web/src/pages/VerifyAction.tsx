import { Anchor, Button, Group, Tooltip } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, client, errorMessage, unwrap } from '../api/client';
import { ToneBadge } from '../components/StatusBadge';

/** How a Verification run of one file ended, with the line that says why when it found a problem. */
interface VerifyOutcome {
  executionId: string;
  status: string;
  problem: string | null;
}

/**
 * Queues a Verification run of one stored backup (`POST /api/storage/{id}/verify`: SHA-256 against its sidecar, every
 * encrypted chunk authenticated), waits for it, and reads its first error line, so the explorer can say what is wrong.
 */
async function verify(storageId: string, file: string): Promise<VerifyOutcome> {
  const { executionId } = await unwrap(api.POST('/api/storage/{id}/verify', { params: { path: { id: storageId } }, body: { file } }));
  const ended = await client.waitForExecution(executionId);
  if (ended.status === 'Success') return { executionId, status: ended.status, problem: null };
  const detail = await unwrap(api.GET('/api/executions/{id}', { params: { path: { id: executionId }, query: { includeLogs: 'true' } } }));
  const problem = detail.data.logs?.find((line) => line.level === 'error')?.message ?? ended.error ?? null;
  return { executionId, status: ended.status, problem };
}

const LABELS: Record<string, { color: string; text: string }> = {
  Success: { color: 'green', text: 'verified' },
  Partial: { color: 'red', text: 'corrupted' },
  Failed: { color: 'red', text: 'not verified' },
  Cancelled: { color: 'gray', text: 'cancelled' },
};

/** The storage explorer's "Verify" action of one file and its outcome next to it (a link to the run's log). */
export function VerifyAction({ storageId, file }: { storageId: string; file: string }) {
  const run = useMutation({ mutationFn: () => verify(storageId, file) });
  const outcome = run.data;
  const label = outcome ? (LABELS[outcome.status] ?? { color: 'gray', text: outcome.status }) : null;
  return (
    <Group gap={4} wrap="nowrap">
      <Button size="xs" variant="default" onClick={() => run.mutate()} loading={run.isPending} data-testid="verify">
        Verify
      </Button>
      {outcome && label && (
        <Tooltip label={outcome.problem ?? 'SHA-256 matches the sidecar'} multiline w={420} disabled={!outcome.problem && outcome.status !== 'Success'}>
          <Anchor component={Link} to={`/runs/${outcome.executionId}`} underline="never" aria-label={`Verification ${label.text}: ${outcome.problem ?? 'SHA-256 matches'}`}>
            <ToneBadge color={label.color} data-status={outcome.status}>
              {label.text}
            </ToneBadge>
          </Anchor>
        </Tooltip>
      )}
      {run.error && (
        <Tooltip label={errorMessage(run.error)} multiline w={360}>
          <ToneBadge color="red" data-status="refused">
            refused
          </ToneBadge>
        </Tooltip>
      )}
    </Group>
  );
}
