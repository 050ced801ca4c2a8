import { Button, Group } from '@mantine/core';
import { Link, useLocation } from 'react-router';

const SECTIONS = [
  { to: '/profile', label: 'Profile' },
  { to: '/profile/security', label: 'Security' },
];

/** The two parts of one's own account: profile and preferences, and sign-in security. Plain links, so each has its URL. */
export function ProfileNav() {
  const { pathname } = useLocation();
  return (
    <Group component="nav" aria-label="Account sections" gap="xs">
      {SECTIONS.map((section) => {
        const current = pathname === section.to;
        return (
          <Button key={section.to} component={Link} to={section.to} size="xs" variant={current ? 'filled' : 'default'} aria-current={current ? 'page' : undefined}>
            {section.label}
          </Button>
        );
      })}
    </Group>
  );
}
