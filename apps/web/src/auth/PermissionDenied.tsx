import { Alert, Button, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';

/**
 * What a page the caller may not use says instead of its content: the permission it needs, so the user can ask an
 * administrator for it (the API's own 403 answer names nothing, by SPEC).
 */
export function PermissionDenied({ permission, title }: { permission: string; title: string }) {
  return (
    <Stack maw={640}>
      <Title order={2}>{title}</Title>
      <Alert color="gray" variant="outline" title="You do not have access to this page" data-testid="permission-denied">
        <Text size="sm">
          This page needs the <code>{permission}</code> permission. An administrator can add it to your group on the Groups & permissions page.
        </Text>
      </Alert>
      <div>
        <Button component={Link} to="/profile" variant="default">
          Your profile
        </Button>
      </div>
    </Stack>
  );
}
