import { Alert, Button, Center, Loader, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { errorMessage } from '../api/client';

export function FullPageLoader() {
  return (
    <Center h="100vh" aria-busy="true">
      <Loader aria-label="Loading" />
    </Center>
  );
}

/** Loading, error and empty states of a query, so every page shows them the same way. */
export function QueryState(props: { isPending: boolean; error: unknown; isEmpty?: boolean; empty?: ReactNode; children: ReactNode }) {
  if (props.isPending) {
    return (
      <Center py="xl" aria-busy="true">
        <Loader aria-label="Loading" />
      </Center>
    );
  }
  if (props.error) return <ErrorAlert error={props.error} />;
  if (props.isEmpty) return <EmptyState>{props.empty}</EmptyState>;
  return <>{props.children}</>;
}

export function ErrorAlert({ error, title = 'Something went wrong' }: { error: unknown; title?: string }) {
  return (
    <Alert color="red" title={title} role="alert">
      {errorMessage(error)}
    </Alert>
  );
}

export function EmptyState({ children }: { children: ReactNode }) {
  return (
    <Stack align="center" py="xl" gap="xs">
      <Text c="dimmed">{children}</Text>
    </Stack>
  );
}

export function NotFound() {
  return (
    <Stack align="center" py="xl">
      <Title order={2}>Page not found</Title>
      <Button component={Link} to="/">
        Back to the dashboard
      </Button>
    </Stack>
  );
}
