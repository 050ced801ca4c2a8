import { ActionIcon, AppShell, Burger, Group, NavLink, ScrollArea, Text, Title, Tooltip, useComputedColorScheme, useMantineColorScheme } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { useEffect } from 'react';
import { Link, Navigate, Outlet, useLocation, useNavigate } from 'react-router';
import { api, errorMessage, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { PermissionDenied } from '../auth/PermissionDenied';
import { permissionForPath } from '../auth/permissions';
import { pageTitle } from './page-titles';

interface NavItem {
  to: string;
  label: string;
}

/** The navigation in sections: daily work first, then what jobs are built from, then notifications and admin. */
const NAV: Array<{ section: string; items: NavItem[] }> = [
  {
    section: 'Backups',
    items: [
      { to: '/', label: 'Dashboard' },
      { to: '/jobs', label: 'Jobs' },
      { to: '/history', label: 'History' },
      { to: '/storage', label: 'Storage' },
    ],
  },
  {
    section: 'Connections',
    items: [
      { to: '/sources', label: 'Sources' },
      { to: '/destinations', label: 'Destinations' },
      { to: '/credentials', label: 'Credential profiles' },
      { to: '/encryption', label: 'Encryption profiles' },
      { to: '/agents', label: 'Agents' },
    ],
  },
  {
    section: 'Job building blocks',
    items: [
      { to: '/retention-policies', label: 'Retention policies' },
      { to: '/naming-templates', label: 'Naming templates' },
      { to: '/schedule-presets', label: 'Schedule presets' },
    ],
  },
  {
    section: 'Notifications',
    items: [
      { to: '/channels', label: 'Channels' },
      { to: '/notification-templates', label: 'Notification templates' },
      { to: '/settings/notifications', label: 'System notifications' },
      { to: '/notifications/log', label: 'Notification log' },
    ],
  },
  {
    section: 'Administration',
    items: [
      { to: '/users', label: 'Users' },
      { to: '/groups', label: 'Groups & permissions' },
      { to: '/api-keys', label: 'API keys' },
      { to: '/settings', label: 'Settings' },
      { to: '/settings/sso', label: 'Single sign-on' },
      { to: '/audit', label: 'Audit log' },
    ],
  },
];

function ColorSchemeToggle() {
  const { setColorScheme } = useMantineColorScheme();
  const computed = useComputedColorScheme('light');
  const next = computed === 'dark' ? 'light' : 'dark';
  return (
    <Tooltip label={`Switch to ${next} mode`}>
      <ActionIcon variant="default" size="lg" aria-label={`Switch to ${next} mode`} onClick={() => setColorScheme(next)} data-testid="color-scheme">
        <span aria-hidden="true">{computed === 'dark' ? '☀' : '☾'}</span>
      </ActionIcon>
    </Tooltip>
  );
}

/** The signed-in frame: header with the user's menu, navigation (a drawer on phones), and the page. */
export function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const location = useLocation();
  const navigate = useNavigate();
  const auth = useAuth();
  // Menus follow the caller's permissions (one table, shared with the page guard below).
  const isAllowed = (path: string) => {
    const permission = permissionForPath(path);
    return !permission || auth.can(permission);
  };
  const sections = NAV.map((entry) => ({ ...entry, items: entry.items.filter((item) => isAllowed(item.to)) })).filter((entry) => entry.items.length > 0);
  // The most specific entry is the active one (/settings/sso is not also /settings).
  const activeItem = NAV.flatMap((entry) => entry.items)
    .filter((item) => (item.to === '/' ? location.pathname === '/' : location.pathname === item.to || location.pathname.startsWith(`${item.to}/`)))
    .sort((a, b) => b.to.length - a.to.length)[0];
  const active = activeItem?.to;
  const title = pageTitle(location.pathname, activeItem?.label);
  useEffect(() => {
    document.title = title;
  }, [title]);
  const needed = permissionForPath(location.pathname);
  // Someone without the dashboard lands on the first page they can use instead of a refusal.
  const landing = location.pathname === '/' && !auth.can('dashboard:read') ? sections[0]?.items.find((item) => item.to !== '/')?.to : undefined;
  if (landing) return <Navigate to={landing} replace />;

  const signOut = async () => {
    try {
      await unwrap(api.POST('/api/auth/sign-out'));
    } catch (error) {
      notifications.show({ color: 'red', title: 'Sign-out failed', message: errorMessage(error) });
      return;
    }
    await auth.refresh();
    navigate('/sign-in', { replace: true });
  };

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 230, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={1} size="h3">
              Holdfast
            </Title>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <Text size="sm" visibleFrom="sm" component={Link} to="/profile" c="inherit">
              {auth.current?.user.name}
            </Text>
            <ColorSchemeToggle />
            <ActionIcon variant="default" size="lg" onClick={signOut} aria-label="Sign out" data-testid="sign-out" w="auto" px="xs">
              <Text size="sm">Sign out</Text>
            </ActionIcon>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main navigation">
        {/* The section takes the navbar's height and scrolls: the list is taller than a laptop screen. */}
        <AppShell.Section grow component={ScrollArea} type="auto">
          {sections.map((entry) => (
            <div key={entry.section} role="group" aria-label={entry.section}>
              <Text size="xs" fw={700} tt="uppercase" px="sm" pt="sm" pb={4}>
                {entry.section}
              </Text>
              {entry.items.map((item) => (
                <NavLink key={item.to} component={Link} to={item.to} label={item.label} onClick={close} active={item.to === active} />
              ))}
            </div>
          ))}
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        {needed && !auth.can(needed) ? <PermissionDenied permission={needed} title={title.replace(/ · Holdfast$/, '')} /> : <Outlet />}
      </AppShell.Main>
    </AppShell>
  );
}
