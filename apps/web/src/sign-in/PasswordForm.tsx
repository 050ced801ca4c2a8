import { Button, PasswordInput, Stack, TextInput } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { z } from 'zod';
import { api, unwrap } from '../api/client';
import { ErrorAlert } from '../components/PageState';
import type { SecondFactorDue, SignedIn } from './types';

const signInSchema = z.object({
  email: z.email('Enter a valid email address'),
  password: z.string().min(1, 'Enter your password'),
});

/** Email and password; the answer is either a session or the request for a second factor. */
export function PasswordForm({ onSignedIn, onSecondFactor }: { onSignedIn(answer: SignedIn): Promise<void>; onSecondFactor(due: SecondFactorDue): void }) {
  const [values, setValues] = useState({ email: '', password: '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<unknown>();
  const [busy, setBusy] = useState(false);

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
      if ('twoFactorRequired' in answer) onSecondFactor(answer);
      else await onSignedIn(answer);
    } catch (error) {
      setFailure(error);
    } finally {
      setBusy(false);
    }
  };

  return (
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
        <Button type="submit" loading={busy}>
          Sign in
        </Button>
      </Stack>
    </form>
  );
}
