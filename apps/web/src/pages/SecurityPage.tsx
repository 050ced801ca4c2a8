import { Stack, Title } from '@mantine/core';
import { ProfileNav } from '../components/ProfileNav';
import { PasskeysPanel } from '../security/PasskeysPanel';
import { TwoFactorPanel } from '../security/TwoFactorPanel';

/** Own sign-in security: two-factor with an authenticator app (and its backup codes) and passkeys. */
export default function SecurityPage() {
  return (
    <Stack maw={920}>
      <Title order={2}>Security</Title>
      <ProfileNav />
      <TwoFactorPanel />
      <PasskeysPanel />
    </Stack>
  );
}
