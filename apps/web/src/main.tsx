import '@mantine/core/styles.css';
import '@mantine/notifications/styles.css';
import './styles.css';
import { Alert, Drawer, MantineProvider, Modal, Notification, createTheme, type CSSVariablesResolver } from '@mantine/core';
import { Notifications } from '@mantine/notifications';
import { QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router';
import { isClientError, isUnauthorized } from './api/client';
import { AuthProvider } from './auth/AuthProvider';
import { router } from './routes';
import { StepUpDialog } from './security/StepUp';

// Shade 9 (light) / 8 (dark) and auto-contrast keep text on filled buttons and badges above WCAG AA in both colour schemes.
// Every close button gets a name by default (issue 47: the restore dialog's and the new API key's were unnamed).
const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 9, dark: 8 },
  autoContrast: true,
  luminanceThreshold: 0.4,
  defaultRadius: 'md',
  components: {
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    Drawer: Drawer.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
    Notification: Notification.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Dismiss' } } }),
    Alert: Alert.extend({ defaultProps: { closeButtonLabel: 'Dismiss' } }),
  },
});

// Mantine's default "dimmed" grey is below 4.5:1 on white; a shade darker (lighter in dark mode) passes WCAG AA.
const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-dimmed': 'var(--mantine-color-gray-7)' },
  dark: { '--mantine-color-dimmed': 'var(--mantine-color-dark-1)' },
});

const queryClient: QueryClient = new QueryClient({
  // A 401 anywhere means the session ended (expired or signed out elsewhere): re-check it, and the gate then
  // sends the user to sign-in (the session query itself answers null on 401, so this cannot loop).
  queryCache: new QueryCache({
    onError: (error) => {
      if (isUnauthorized(error)) void queryClient.invalidateQueries({ queryKey: ['auth', 'session'] });
    },
  }),
  defaultOptions: {
    queries: {
      // A 4xx will not fix itself by retrying (issue 47: a 403 was asked for 14 times; a 429 retried makes it worse);
      // only network failures and 5xx are tried again, once.
      retry: (count, error) => !isClientError(error) && count < 1,
      refetchOnWindowFocus: false,
      staleTime: 5_000,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="auto" cssVariablesResolver={cssVariablesResolver}>
      <Notifications position="top-right" />
      <QueryClientProvider client={queryClient}>
        <AuthProvider>
          <RouterProvider router={router} />
          <StepUpDialog />
        </AuthProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
);
