import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createContext, useCallback, useContext, useMemo, type ReactNode } from 'react';
import { api, isUnauthorized, session, unwrap } from '../api/client';
import { holds, holdsOn } from './permissions';

type SessionView = NonNullable<Awaited<ReturnType<typeof loadSession>>>;
export type CurrentUser = SessionView['user'];

interface AuthState {
  /** Undefined while loading; null when nobody is signed in. */
  current: SessionView | null | undefined;
  setupRequired: boolean;
  emailLoginEnabled: boolean;
  loading: boolean;
  /** The session could not be read (server error, rate limit): not the same as being signed out. */
  error: unknown;
  /** Re-reads the session after sign-in, setup or sign-out. */
  refresh(): Promise<void>;
  /** Holds `permission` unscoped or through a scoped grant on some record. */
  can(permission: string): boolean;
  /** Holds `permission` on this record (`type`: job, source, destination, ...). */
  canOn(permission: string, type: string, id: string): boolean;
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
  // One session read per tab: the session first (it is all a signed-in page needs), and the public status (setup
  // required, email sign-in) only when nobody is signed in. Neither is read again until sign-in or sign-out.
  const current = useQuery({ queryKey: ['auth', 'session'], queryFn: loadSession, staleTime: Infinity });
  const status = useQuery({ queryKey: ['auth', 'status'], queryFn: () => unwrap(api.GET('/api/auth/status')), enabled: current.data === null, staleTime: Infinity });
  const refresh = useCallback(async () => {
    // Everything cached belonged to the previous identity.
    queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== 'auth' });
    await queryClient.invalidateQueries({ queryKey: ['auth'] });
  }, [queryClient]);
  const value = useMemo<AuthState>(() => {
    const data = current.data;
    return {
      current: data,
      setupRequired: data === null && (status.data?.setupRequired ?? false),
      emailLoginEnabled: status.data?.emailLoginEnabled ?? true,
      loading: current.isPending || (data === null && status.isPending),
      error: current.error,
      refresh,
      can: (permission) => holds(data, permission),
      canOn: (permission, type, id) => holdsOn(data, permission, type, id),
    };
  }, [status.data, status.isPending, current.data, current.isPending, current.error, refresh]);
  return <AuthContext.Provider value={value}>{children}</AuthContext.Provider>;
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (!state) throw new Error('useAuth outside AuthProvider');
  return state;
}

