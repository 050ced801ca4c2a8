import { Group, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** A configuration page's title with its add button(s) on the right. */
export function PageHeader({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Group justify="space-between">
      <Title order={2}>{title}</Title>
      {children}
    </Group>
  );
}
