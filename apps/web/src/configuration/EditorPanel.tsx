import { Button, Group, Paper, Stack, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import { ErrorAlert } from '../components/PageState';

/**
 * The add/edit form of a configuration page: a titled panel whose submit runs the page's own validation
 * (the browser's is off, so messages stay ours), the save error, then Save and, when given, Cancel.
 */
export function EditorPanel(props: {
  title: string;
  onSubmit: () => void;
  submitLabel: string;
  saving: boolean;
  error: unknown;
  errorTitle: string;
  onCancel?: () => void;
  children: ReactNode;
}) {
  return (
    <Paper withBorder p="md">
      <Title order={3} size="h4" mb="sm">
        {props.title}
      </Title>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          props.onSubmit();
        }}
      >
        <Stack>
          {props.children}
          {Boolean(props.error) && <ErrorAlert error={props.error} title={props.errorTitle} />}
          <Group>
            <Button type="submit" loading={props.saving}>
              {props.submitLabel}
            </Button>
            {props.onCancel && (
              <Button variant="default" onClick={props.onCancel}>
                Cancel
              </Button>
            )}
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
