import { Alert, Anchor, Button, Code, Group, Stack, Switch, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, QueryState } from '../components/PageState';
import { ToneBadge } from '../components/StatusBadge';

/** Permission-gated list of OIDC and SAML providers: enable/disable, edit, delete, and which one auto-redirects. */
export default function SsoProvidersPage() {
  const auth = useAuth();
  const canRead = auth.can('settings:read');
  const canWrite = auth.can('settings:write');
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: ['sso-providers'], queryFn: () => unwrap(api.GET('/api/sso/providers')), enabled: canRead });
  // The sign-in page's view: tells which provider OIDC_AUTO_REDIRECT names (only when it exists and is enabled).
  const offered = useQuery({ queryKey: ['sso-offered'], queryFn: () => unwrap(api.GET('/api/auth/sso/providers')), enabled: canRead });
  const invalidate = () => Promise.all([queryClient.invalidateQueries({ queryKey: ['sso-providers'] }), queryClient.invalidateQueries({ queryKey: ['sso-offered'] })]);
  const toggle = useMutation({
    mutationFn: ({ id, enabled }: { id: string; enabled: boolean }) => unwrap(api.PUT('/api/sso/providers/{id}', { params: { path: { id } }, body: { enabled } })),
    onSuccess: invalidate,
  });
  const remove = useMutation({ mutationFn: (id: string) => unwrap(api.DELETE('/api/sso/providers/{id}', { params: { path: { id } } })), onSuccess: invalidate });

  if (!canRead) {
    return (
      <Stack maw={920}>
        <Title order={2}>Single sign-on</Title>
        <Alert color="yellow" title="Not allowed">
          Viewing single sign-on providers needs the <Code>settings:read</Code> permission.
        </Alert>
      </Stack>
    );
  }
  const providers = list.data?.providers ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Single sign-on</Title>
        {canWrite && (
          <Button component={Link} to="/settings/sso/new">
            Add provider
          </Button>
        )}
      </Group>
      <Text size="sm">
        OIDC and SAML identity providers people can sign in with. Enabled ones appear as buttons on the sign-in page. <Anchor component={Link} to="/settings" underline="always">Back to settings</Anchor>
      </Text>
      {(toggle.error ?? remove.error) && <ErrorAlert error={toggle.error ?? remove.error} />}
      <QueryState isPending={list.isPending} error={list.error} isEmpty={providers.length === 0} empty="No single sign-on providers yet.">
        <Table.ScrollContainer minWidth={760}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Provider id</Table.Th>
                <Table.Th>Protocol</Table.Th>
                <Table.Th>New users</Table.Th>
                <Table.Th>Group mappings</Table.Th>
                <Table.Th>Enabled</Table.Th>
                <Table.Th>Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {providers.map((provider) => (
                <Table.Tr key={provider.id} data-testid="sso-provider-row">
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      <Anchor component={Link} to={`/settings/sso/${provider.id}`}>
                        {provider.name}
                      </Anchor>
                      {offered.data?.autoRedirect === provider.providerId && (
                        <ToneBadge color="blue" data-testid="auto-redirect-badge">
                          automatic redirect
                        </ToneBadge>
                      )}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    <Code>{provider.providerId}</Code>
                  </Table.Td>
                  <Table.Td>{provider.type.toUpperCase()}</Table.Td>
                  <Table.Td>{provider.allowProvisioning ? 'created on first sign-in' : 'existing accounts only'}</Table.Td>
                  <Table.Td>{provider.groupMappings.length}</Table.Td>
                  <Table.Td>
                    <Switch
                      aria-label={`Enable ${provider.name}`}
                      checked={provider.enabled}
                      disabled={!canWrite}
                      onChange={(event) => toggle.mutate({ id: provider.id, enabled: event.currentTarget.checked })}
                    />
                  </Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button size="xs" variant="default" component={Link} to={`/settings/sso/${provider.id}`} aria-label={`Edit ${provider.name}`}>
                        {canWrite ? 'Edit' : 'View'}
                      </Button>
                      {canWrite && (
                        <Button
                          size="xs"
                          variant="default"
                          color="red"
                          aria-label={`Delete ${provider.name}`}
                          onClick={() => window.confirm(`Delete ${provider.name}? People who signed in with it keep their accounts and other sign-in methods.`) && remove.mutate(provider.id)}
                        >
                          Delete
                        </Button>
                      )}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </QueryState>
    </Stack>
  );
}
