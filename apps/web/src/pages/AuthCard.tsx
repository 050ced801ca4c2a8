import { Center, Paper, Stack, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** The centred card of the signed-out pages. */
export function AuthCard({ title, subtitle, children }: { title: string; subtitle?: string; children: ReactNode }) {
  return (
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={420}>
        <Stack>
          <div>
            <Title order={1} size="h2">
              {title}
            </Title>
            {subtitle && <Text c="dimmed" size="sm">{subtitle}</Text>}
          </div>
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}
