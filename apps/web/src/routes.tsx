import { createBrowserRouter, type RouteObject } from 'react-router';
import { Shell } from './layout/Shell';
import { AuthGate } from './auth/AuthGate';
import { NotFound } from './components/PageState';

/** Each page is its own chunk: the entry only holds the shell, the router and the client. */
function page(load: () => Promise<{ default: React.ComponentType }>): Pick<RouteObject, 'lazy'> {
  return { lazy: async () => ({ Component: (await load()).default }) };
}

export const router = createBrowserRouter([
  { path: '/setup', ...page(() => import('./pages/SetupPage')) },
  { path: '/sign-in', ...page(() => import('./pages/SignInPage')) },
  {
    element: (
      <AuthGate>
        <Shell />
      </AuthGate>
    ),
    children: [
      { index: true, ...page(() => import('./pages/DashboardPage')) },
      { path: 'sources', ...page(() => import('./pages/AdaptersPage')) },
      { path: 'destinations', ...page(() => import('./pages/AdaptersPage')) },
      { path: 'channels', ...page(() => import('./pages/AdaptersPage')) },
      { path: 'adapters/new/:type', ...page(() => import('./pages/AdapterEditPage')) },
      { path: 'adapters/:id', ...page(() => import('./pages/AdapterEditPage')) },
      { path: 'jobs', ...page(() => import('./pages/JobsPage')) },
      { path: 'jobs/new', ...page(() => import('./pages/JobEditPage')) },
      { path: 'jobs/:id', ...page(() => import('./pages/JobEditPage')) },
      { path: 'runs/:id', ...page(() => import('./pages/RunPage')) },
      { path: 'history', ...page(() => import('./pages/HistoryPage')) },
      { path: 'storage', ...page(() => import('./pages/StoragePage')) },
      { path: 'api-keys', ...page(() => import('./pages/ApiKeysPage')) },
      { path: 'agents', ...page(() => import('./pages/AgentsPage')) },
      { path: 'users', ...page(() => import('./pages/UsersPage')) },
      { path: 'groups', ...page(() => import('./pages/GroupsPage')) },
      { path: 'credentials', ...page(() => import('./pages/CredentialsPage')) },
      { path: 'encryption', ...page(() => import('./pages/VaultPage')) },
      { path: 'retention-policies', ...page(() => import('./pages/RetentionPoliciesPage')) },
      { path: 'naming-templates', ...page(() => import('./pages/NamingTemplatesPage')) },
      { path: 'schedule-presets', ...page(() => import('./pages/SchedulePresetsPage')) },
      { path: 'notification-templates', ...page(() => import('./pages/NotificationTemplatesPage')) },
      { path: 'notifications/log', ...page(() => import('./pages/NotificationLogPage')) },
      { path: 'settings/notifications', ...page(() => import('./pages/SystemEventsPage')) },
      { path: 'settings', ...page(() => import('./pages/SettingsPage')) },
      { path: 'audit', ...page(() => import('./pages/AuditPage')) },
      { path: 'profile', ...page(() => import('./pages/ProfilePage')) },
      { path: 'profile/security', ...page(() => import('./pages/SecurityPage')) },
      { path: 'settings/sso', ...page(() => import('./pages/SsoProvidersPage')) },
      { path: 'settings/sso/new', ...page(() => import('./pages/SsoProviderEditPage')) },
      { path: 'settings/sso/:id', ...page(() => import('./pages/SsoProviderEditPage')) },
      { path: '*', element: <NotFound /> },
    ],
  },
]);
