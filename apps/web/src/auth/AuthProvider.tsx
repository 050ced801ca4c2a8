import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useMemo, type ReactNode } from 'react';
import { api, isUnauthorized, session, unwrap } from '../api/client';

type SessionView = NonNullable<Awaited<ReturnType<typeof loadSession>>>;
export type CurrentUser = SessionView['user'];

interface AuthState {
  /** Undefined while loading; null when nobody is signed in. */
  current: SessionView | null | undefined;
  setupRequired: boolean;
  emailLoginEnabled: boolean;
  loading: boolean;
  /** Re-reads the session after sign-in, setup or sign-out. */
  refresh(): Promise<void>;
  can(permission: string): boolean;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

/** The session with its CSRF token, or null when the cookie is missing or expired. */
async function loadSession() {
  try {
    const answer = await unwrap(api.GET('/api/auth/session'));
    session.csrfToken = answer.csrfToken ?? '';
    return answer;
  } catch (error) {
    if (isUnauthorized(error)) {
      session.csrfToken = '';
      return null;
    }
    throw error;
  }
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient();
  const status = useQuery({ queryKey: ['auth', 'status'], queryFn: () => unwrap(api.GET('/api/auth/status')) });
  const current = useQuery({ queryKey: ['auth', 'session'], queryFn: loadSession, enabled: status.data?.setupRequired === false });
  const refresh = useCallback(async () => {
    // Everything cached belonged to the previous identity.
    queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'auth' });
    await queryClient.invalidateQueries({ queryKey: ['auth'] });
  }, [queryClient]);
  const value = useMemo<AuthState>(() => {
    const data = current.data;
    return {
      current: status.data?.setupRequired ? null : data,
      setupRequired: status.data?.setupRequired ?? false,
      emailLoginEnabled: status.data?.emailLoginEnabled ?? true,
      loading: status.isPending || (status.data?.setupRequired === false && current.isPending),
      refresh,
      can: (permission) => Boolean(data && (data.isSuperAdmin || data.permissions.includes(permission))),
    };
  }, [status.data, status.isPending, current.data, current.isPending, refresh]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (!state) throw new Error('useAuth outside AuthProvider');
  return state;
}

