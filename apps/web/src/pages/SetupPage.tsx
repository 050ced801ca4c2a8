import { Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { Navigate, useNavigate } from 'react-router';
import { z } from 'zod';
import { api, session, unwrap } from '../api/client';
import { useAuth } from '../auth/AuthProvider';
import { ErrorAlert, FullPageLoader } from '../components/PageState';
import { AuthCard } from './AuthCard';

const setupSchema = z
  .object({
    name: z.string().trim().min(1, 'Enter your name'),
    email: z.email('Enter a valid email address'),
    password: z.string().min(12, 'Use at least 12 characters'),
    confirm: z.string(),
  })
  .refine((value) => value.password === value.confirm, { path: ['confirm'], message: 'The passwords differ' });

/** First run: creates the first administrator (the server accepts it only while no user exists). */
export default function SetupPage() {
  const auth = useAuth();
  const navigate = useNavigate();
  const [values, setValues] = useState({ name: '', email: '', password: '', confirm: '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  if (auth.loading) return <FullPageLoader />;
  if (!auth.setupRequired) return <Navigate to="/" replace />;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const parsed = setupSchema.safeParse(values);
    if (!parsed.success) {
      setErrors(Object.fromEntries(parsed.error.issues.map((issue) => [String(issue.path[0]), issue.message])));
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      const signedIn = await unwrap(api.POST('/api/auth/setup', { body: { name: parsed.data.name, email: parsed.data.email, password: parsed.data.password } }));
      session.csrfToken = signedIn.csrfToken;
      await auth.refresh();
      navigate('/', { replace: true });
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };
  const field = (name: keyof typeof values) => ({
    value: values[name],
    error: errors[name],
    onChange: (event: React.ChangeEvent<HTMLInputElement>) => setValues({ ...values, [name]: event.currentTarget.value }),
  });

  return (
    <AuthCard title="Welcome to Holdfast" subtitle="Create the first administrator account.">
      <form onSubmit={submit} noValidate>
        <Stack>
          {failure !== undefined && <ErrorAlert error={failure} title="Setup failed" />}
          <TextInput label="Name" autoComplete="name" required {...field('name')} />
          <TextInput label="Email" type="email" autoComplete="email" required {...field('email')} />
          <PasswordInput label="Password" autoComplete="new-password" required {...field('password')} />
          <PasswordInput label="Repeat password" autoComplete="new-password" required {...field('confirm')} />
          <Button type="submit" loading={busy}>
            Create administrator
          </Button>
        </Stack>
      </form>
    </AuthCard>
  );
}
