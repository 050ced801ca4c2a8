import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
import { FullPageLoader } from '../components/PageState';
import { useAuth } from './AuthProvider';

/** Sends visitors to first-run setup (no user yet) or sign-in (no session), keeping where they wanted to go. */
export function AuthGate({ children }: { children: ReactNode }) {
  const auth = useAuth();
  const location = useLocation();
  if (auth.loading) return <FullPageLoader />;
  if (auth.setupRequired) return <Navigate to="/setup" replace />;
  if (!auth.current) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />;
  return <>{children}</>;
}
