import { Anchor, Button, Code, Divider, Fieldset, Group, Paper, PasswordInput, SegmentedControl, Stack, Switch, Text, TextInput, Textarea, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, QueryState } from '../components/PageState';
import { GroupMappingTable } from '../sso/GroupMappingTable';
import { createBodyOf, emptyProviderForm, formOf, providerFormSchema, type ProviderForm, updateBodyOf } from '../sso/provider-form';

/** What to register at the identity provider: Holdfast's redirect URI (OIDC) or ACS and metadata URLs (SAML). */
function Endpoints({ form }: { form: ProviderForm }) {
  if (!form.providerId) return null;
  const origin = window.location.origin;
  const id = encodeURIComponent(form.providerId);
  return (
    <Paper withBorder p="sm" bg="var(--mantine-color-default-hover)">
      <Stack gap={4}>
        <Text size="sm" fw={500}>
          Register at the identity provider
        </Text>
        {form.type === 'oidc' ? (
          <Text size="sm">
            Redirect URI: <Code data-testid="oidc-redirect-uri">{`${origin}/api/auth/sso/oidc/${id}/callback`}</Code>
          </Text>
        ) : (
          <>
            <Text size="sm">
              Assertion consumer service (POST): <Code>{`${origin}/api/auth/sso/saml/${id}/acs`}</Code>
            </Text>
            <Text size="sm">
              Service provider metadata: <Code>{`${origin}/api/auth/sso/saml/${id}/metadata`}</Code>
            </Text>
          </>
        )}
      </Stack>
    </Paper>
  );
}

/** Create or edit an OIDC or SAML provider: protocol fields, provisioning, domains, group claim and mapping table. */
export default function SsoProviderEditPage() {
  const { id } = useParams();
  const creating = id === undefined;
  const auth = useAuth();
  const canWrite = auth.can('settings:write');
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const existing = useQuery({
    queryKey: ['sso-providers', id],
    queryFn: () => unwrap(api.GET('/api/sso/providers/{id}', { params: { path: { id: id! } } })),
    enabled: !creating && auth.can('settings:read'),
  });
  const groups = useQuery({ queryKey: ['groups'], queryFn: () => unwrap(api.GET('/api/groups')), enabled: auth.can('groups:read') });
  const [form, setForm] = useState<ProviderForm>(emptyProviderForm);
  const [errors, setErrors] = useState<Record<string, string>>({});
  useEffect(() => {
    if (existing.data) setForm(formOf(existing.data));
  }, [existing.data]);

  const save = useMutation({
    mutationFn: async (values: ProviderForm) => {
      if (creating) return unwrap(api.POST('/api/sso/providers', { body: createBodyOf(values) }));
      return unwrap(api.PUT('/api/sso/providers/{id}', { params: { path: { id } }, body: updateBodyOf(values) }));
    },
    onSuccess: async (saved) => {
      notifications.show({ color: 'green', message: `${saved.name} saved` });
      await queryClient.invalidateQueries({ queryKey: ['sso-providers'] });
      await queryClient.invalidateQueries({ queryKey: ['sso-offered'] });
      navigate('/settings/sso');
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = providerFormSchema.safeParse(form);
    if (!parsed.success) {
      setErrors(Object.fromEntries(parsed.error.issues.map((issue) => [issue.path.join('.'), issue.message])));
      return;
    }
    setErrors({});
    save.mutate(form);
  };
  const field = <K extends keyof ProviderForm>(key: K) => ({
    value: form[key] as string,
    error: errors[key],
    disabled: !canWrite,
    'data-field': `sso-${key}`,
    onChange: (event: { currentTarget: { value: string } }) => {
      setForm({ ...form, [key]: event.currentTarget.value });
      // A field's complaint goes once it is edited; the next save checks everything again.
      if (errors[key]) setErrors({ ...errors, [key]: '' });
    },
  });
  const secretStored = existing.data?.hasClientSecret ?? false;

  return (
    <Stack maw={920}>
      <Title order={2}>{creating ? 'Add single sign-on provider' : `Provider ${existing.data?.name ?? ''}`}</Title>
      <Anchor component={Link} to="/settings/sso" size="sm">
        All single sign-on providers
      </Anchor>
      <QueryState isPending={!creating && existing.isPending} error={existing.error}>
        <form onSubmit={submit} noValidate>
          <Stack>
            <Fieldset legend="Provider">
              <Stack>
                {creating ? (
                  <Stack gap={4}>
                    <Text size="sm" fw={500} id="sso-type-label">
                      Protocol
                    </Text>
                    <SegmentedControl
                      aria-labelledby="sso-type-label"
                      value={form.type}
                      onChange={(value) => setForm({ ...form, type: value as ProviderForm['type'] })}
                      data={[
                        { value: 'oidc', label: 'OpenID Connect' },
                        { value: 'saml', label: 'SAML 2.0' },
                      ]}
                      data-field="sso-type"
                    />
                  </Stack>
                ) : (
                  <Text size="sm">
                    Protocol: <strong>{form.type.toUpperCase()}</strong> · Provider id: <Code>{form.providerId}</Code> (both fixed)
                  </Text>
                )}
                {creating && (
                  <TextInput label="Provider id" description="Used in sign-in URLs and OIDC_AUTO_REDIRECT; lower-case letters, digits, - and _" required {...field('providerId')} />
                )}
                <TextInput label="Name on the sign-in button" required {...field('name')} />
                <Switch label="Enabled (offered on the sign-in page)" checked={form.enabled} disabled={!canWrite} onChange={(event) => setForm({ ...form, enabled: event.currentTarget.checked })} data-field="sso-enabled" />
                <Switch
                  label="Create an account on first sign-in"
                  description="Off: only people who already have a Holdfast account (same verified email) can sign in."
                  checked={form.allowProvisioning}
                  disabled={!canWrite}
                  onChange={(event) => setForm({ ...form, allowProvisioning: event.currentTarget.checked })}
                  data-field="sso-allowProvisioning"
                />
                <TextInput label="Allowed email domains" description="Comma separated, e.g. example.com, example.org; empty: any" {...field('domain')} />
              </Stack>
            </Fieldset>
            <Endpoints form={form} />
            {form.type === 'oidc' ? (
              <Fieldset legend="OpenID Connect">
                <Stack>
                  <TextInput label="Issuer URL" description="Discovery is read from <issuer>/.well-known/openid-configuration" {...field('issuer')} />
                  <TextInput label="Discovery URL" description="Only when the discovery document is not under the issuer" {...field('discoveryEndpoint')} />
                  <TextInput label="Client id" required {...field('clientId')} />
                  <PasswordInput
                    label="Client secret"
                    description="Write-only: stored encrypted and never shown again."
                    placeholder={secretStored ? 'stored — leave empty to keep it' : ''}
                    autoComplete="new-password"
                    {...field('clientSecret')}
                  />
                  <TextInput label="Scopes" placeholder="openid email profile" {...field('scopes')} />
                </Stack>
              </Fieldset>
            ) : (
              <Fieldset legend="SAML 2.0">
                <Stack>
                  <TextInput label="IdP single sign-on URL" description="HTTP-Redirect binding" required {...field('samlEntryPoint')} />
                  <Textarea label="IdP signing certificate" description="PEM or base64" required autosize minRows={3} maxRows={10} {...field('samlCertificate')} />
                  <TextInput label="IdP entity id" description="The expected issuer of the assertions; empty: not checked" {...field('issuer')} />
                  <TextInput label="Service provider entity id" placeholder={`urn:holdfast:sp:${form.providerId || '<provider id>'}`} {...field('clientId')} />
                  <Group grow>
                    <TextInput label="Email attribute" placeholder="email, mail or an email NameID" {...field('attributeEmail')} />
                    <TextInput label="Name attribute" placeholder="displayName, name" {...field('attributeName')} />
                  </Group>
                </Stack>
              </Fieldset>
            )}
            <Fieldset legend="Groups">
              <Stack>
                <TextInput
                  label={form.type === 'oidc' ? 'Group claim' : 'Group attribute'}
                  description={form.type === 'oidc' ? 'Claim carrying group names; a dotted path is allowed (realm_access.roles)' : 'Attribute carrying group names'}
                  {...field('groupClaim')}
                />
                <Divider />
                <GroupMappingTable rows={form.groupMappings} groups={groups.data?.groups} errors={errors} disabled={!canWrite} onChange={(rows) => setForm({ ...form, groupMappings: rows })} />
              </Stack>
            </Fieldset>
            {save.error && <ErrorAlert error={save.error} title="Not saved" />}
            {canWrite && (
              <Group>
                <Button type="submit" loading={save.isPending}>
                  {creating ? 'Add provider' : 'Save provider'}
                </Button>
              </Group>
            )}
          </Stack>
        </form>
      </QueryState>
    </Stack>
  );
}
