import { Alert, Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';
import { z } from 'zod';
import { api, session, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, FullPageLoader } from '../components/PageState';
import { AuthCard } from './AuthCard';

const signInSchema = z.object({
  email: z.email('Enter a valid email address'),
  password: z.string().min(1, 'Enter your password'),
});

/** Only same-app paths are followed after sign-in (an open redirect would hand the session page to anyone). */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export default function SignInPage() {
  const auth = useAuth();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const [values, setValues] = useState({ email: '', password: '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  if (auth.loading) return <FullPageLoader />;
  if (auth.setupRequired) return <Navigate to="/setup" replace />;
  if (auth.current) return <Navigate to={safeNext(params.get('next'))} replace />;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const parsed = signInSchema.safeParse(values);
    if (!parsed.success) {
      setErrors(Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0]), issue.message])));
      return;
    }
    setErrors({});
    setFailure(undefined);
    setBusy(true);
    try {
      const answer = await unwrap(api.POST('/api/auth/sign-in', { body: parsed.data }));
      if (!('csrfToken' in answer)) {
        setFailure(new Error('This account uses two-factor sign-in, which this version of the web app does not offer yet.'));
        return;
      }
      session.csrfToken = answer.csrfToken;
      await auth.refresh();
      navigate(safeNext(params.get('next')), { replace: true });
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <AuthCard title="Sign in" subtitle="Holdfast backup manager">
      {!auth.emailLoginEnabled && <Alert color="yellow">Password sign-in is switched off on this server.</Alert>}
      <form onSubmit={submit} noValidate>
        <Stack>
          {failure !== undefined && <ErrorAlert error={failure} title="Sign-in failed" />}
          <TextInput
            label="Email"
            type="email"
            autoComplete="username"
            required
            value={values.email}
            error={errors.email}
            onChange={(event) => setValues({ ...values, email: event.currentTarget.value })}
          />
          <PasswordInput
            label="Password"
            autoComplete="current-password"
            required
            value={values.password}
            error={errors.password}
            onChange={(event) => setValues({ ...values, password: event.currentTarget.value })}
          />
          <Button type="submit" loading={busy} disabled={!auth.emailLoginEnabled}>
            Sign in
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}
