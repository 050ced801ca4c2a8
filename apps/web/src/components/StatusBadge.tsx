import { Badge } from '@mantine/core';
import type { CSSProperties } from 'react';

const COLORS: Record<string, string> = {
  Success: 'green',
  Partial: 'yellow',
  Failed: 'red',
  Cancelled: 'gray',
  Running: 'blue',
  Pending: 'indigo',
  ONLINE: 'green',
  DEGRADED: 'yellow',
  OFFLINE: 'red',
  'Not checked yet': 'gray',
};

/** A coloured tag whose text stays readable in both schemes (the text carries the meaning, not only the colour). */
export function ToneBadge({ color, children, ...rest }: { color: string; children: React.ReactNode; 'data-status'?: string; 'data-testid'?: string }) {
  const style = { '--hf-status-light': `color-mix(in srgb, var(--mantine-color-${color}-9) 65%, black)`, '--hf-status-dark': `var(--mantine-color-${color}-2)` } as CSSProperties;
  return (
    <Badge color={color} variant="light" className="hf-status" style={style} {...rest}>
      {children}
    </Badge>
  );
}

/** Execution or adapter health status as a badge. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <ToneBadge color={COLORS[status] ?? 'gray'} data-status={status}>
      {status}
    </ToneBadge>
  );
}
