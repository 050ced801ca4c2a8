import { Alert, Anchor, Button, Card, Code, Group, Progress, ScrollArea, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { FINAL_STATUSES, type ExecutionStatus, type LogEvent } from '@holdfast/client';
import { useEffect, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, client, errorMessage, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { formatBytes, formatDate, formatDuration } from '../components/format';
import { ErrorAlert, QueryState } from '../components/PageState';
import { stageName } from '../components/stage-names';
import { StatusBadge } from '../components/StatusBadge';

interface LiveState {
  status?: ExecutionStatus;
  stage?: string;
  progress?: number;
  bytes?: number | null;
  rate?: number;
  logs: LogEvent[];
  error?: string | null;
  streamError?: string;
}

/** The current time, once a second while `isTicking`. */
function useNow(isTicking: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!isTicking) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [isTicking]);
  return now;
}

/** Follows one execution live over its event stream: stage, progress, bytes and rate, log lines; cancel. */
export default function RunPage() {
  const { id } = useParams();
  const auth = useAuth();
  const queryClient = useQueryClient();
  const execution = useQuery({
    queryKey: ['execution', id],
    queryFn: () => unwrap(api.GET('/api/executions/{id}', { params: { path: { id: id! }, query: { includeLogs: 'true' } } })),
  });
  const [live, setLive] = useState<LiveState>({ logs: [] });
  const lastBytes = useRef<{ bytes: number; at: number } | null>(null);
  const initialFinal = execution.data ? FINAL_STATUSES.includes(execution.data.data.status) : undefined;

  useEffect(() => {
    if (initialFinal !== false) return;
    const abort = new AbortController();
    (async () => {
      try {
        for await (const event of client.watch(id!, { signal: abort.signal })) {
          if (event.type === 'log') setLive((state) => ({ ...state, logs: [...state.logs, event] }));
          else if (event.type === 'progress') {
            const now = Date.now();
            const bytes = event.bytesProcessed ?? null;
            let rate: number | undefined;
            if (bytes !== null && lastBytes.current && now > lastBytes.current.at) rate = ((bytes - lastBytes.current.bytes) * 1000) / (now - lastBytes.current.at);
            if (bytes !== null) lastBytes.current = { bytes, at: now };
            setLive((state) => ({ ...state, status: event.status, stage: event.stage, progress: event.progress, bytes, rate: rate ?? state.rate }));
          } else {
            setLive((state) => ({ ...state, status: event.status, error: event.error }));
            await queryClient.invalidateQueries({ queryKey: ['execution', id] });
          }
        }
      } catch (error) {
        if (!abort.signal.aborted) setLive((state) => ({ ...state, streamError: errorMessage(error) }));
      }
    })();
    return () => abort.abort();
  }, [id, initialFinal, queryClient]);

  const cancel = useMutation({ mutationFn: () => unwrap(api.POST('/api/executions/{id}/cancel', { params: { path: { id: id! } } })) });
  const data = execution.data?.data;
  const status = live.status ?? data?.status;
  const isFinal = status ? FINAL_STATUSES.includes(status) : false;
  const progress = isFinal && data && FINAL_STATUSES.includes(data.status) ? data.progress : (live.progress ?? data?.progress ?? 0);
  const logs = isFinal && data?.logs?.length ? data.logs : [...(data?.logs ?? []).filter(() => live.logs.length === 0), ...live.logs];
  // The duration ticks while the run goes (issue 47: it read "0 s" through a 35 s run); the server's figure once final.
  const now = useNow(!isFinal && Boolean(data));
  const duration = data && !isFinal ? Math.max(0, now - new Date(data.startedAt).getTime()) : data?.duration;
  const endedWith = live.error ?? data?.error;

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>
          {data?.type ?? 'Run'}: {data?.jobName ?? ''}
        </Title>
        {status && <StatusBadge status={status} />}
      </Group>
      <QueryState isPending={execution.isPending} error={execution.error}>
        {data && (
          <>
            <Card withBorder>
              <Stack gap="xs">
                <Group justify="space-between">
                  <Text data-testid="run-stage">Stage: {stageName(live.stage ?? data.stage)}</Text>
                  <Text data-testid="run-status" aria-live="polite">
                    {status}
                  </Text>
                </Group>
                <Progress value={progress} size="lg" aria-label="Progress" animated={!isFinal} />
                <SimpleGrid cols={{ base: 2, sm: 5 }}>
                  <Text size="sm">Progress: {progress}%</Text>
                  {/* Read from the source and stored after compression are different numbers (issue 47: 330 MiB "bytes" of a 145 MiB backup). */}
                  <Text size="sm" data-testid="run-bytes-read">Read: {formatBytes(live.bytes)}</Text>
                  <Text size="sm" data-testid="run-bytes-stored">Stored: {isFinal ? formatBytes(data.size) : '—'}</Text>
                  <Text size="sm">Rate: {live.rate !== undefined && !isFinal ? `${formatBytes(Math.max(0, Math.round(live.rate)))}/s` : '—'}</Text>
                  <Text size="sm" data-testid="run-duration">Duration: {formatDuration(duration)}</Text>
                </SimpleGrid>
                <Text size="sm">Started {formatDate(data.startedAt)}; ended {formatDate(data.endedAt)}</Text>
                {data.path && <Text size="sm">File: <Code>{data.path}</Code></Text>}
                {status === 'Cancelled' ? (
                  <Alert color="gray" title="Run cancelled" data-testid="run-cancelled">
                    {endedWith ?? 'The run was cancelled before it finished; nothing it started was kept.'}
                  </Alert>
                ) : (
                  endedWith && <ErrorAlert error={new Error(endedWith)} title={status === 'Partial' ? 'Run finished with problems' : 'Run failed'} />
                )}
                {live.streamError && <ErrorAlert error={new Error(live.streamError)} title="Live updates stopped" />}
                {cancel.error && <ErrorAlert error={cancel.error} title="Could not cancel" />}
                <Group>
                  {!isFinal && auth.canOn('jobs:execute', 'job', data.jobId ?? '') && (
                    <Button color="red" variant="outline" onClick={() => cancel.mutate()} loading={cancel.isPending}>
                      Cancel run
                    </Button>
                  )}
                  {data.jobId && (
                    <Anchor component={Link} to={`/jobs/${data.jobId}`}>
                      Open the job
                    </Anchor>
                  )}
                  <Anchor component={Link} to="/history">
                    History
                  </Anchor>
                </Group>
              </Stack>
            </Card>
            <Card withBorder>
              <Title order={3} size="h4" mb="xs">
                Log
              </Title>
              <ScrollArea h={320} type="auto">
                <Stack gap={2} data-testid="run-log">
                  {logs.length === 0 && <Text c="dimmed">No log lines yet.</Text>}
                  {logs.map((line, index) => (
                    <Text key={index} size="xs" ff="monospace" c={line.level === 'error' ? 'red.8' : undefined}>
                      {new Date(line.time).toLocaleTimeString()} [{line.level}] {line.stage}: {line.message}
                    </Text>
                  ))}
                </Stack>
              </ScrollArea>
            </Card>
          </>
        )}
      </QueryState>
    </Stack>
  );
}
