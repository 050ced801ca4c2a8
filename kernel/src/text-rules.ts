import { z } from 'zod';

/**
 * Control characters: C0 (NUL..US), DEL and C1. They never belong in a name, key, path or filter: a NUL cuts SQL in
 * the embedded database driver and PostgreSQL refuses it in text; the others forge log lines and file names.
 */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

/** The one message every route answers for a control character in a single-line field. */
export const CONTROL_CHARACTER_MESSAGE = 'must not contain control characters';

/** True when `text` holds a control character (C0, DEL or C1). */
export function hasControlCharacter(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

/**
 * A single-line text field of a route schema (a name, key, path or filter): a string of `min`..`max` characters
 * without control characters. Every route schema uses this one rule, so the 400 reads the same everywhere.
 */
export function lineText(options: { min?: number; max: number }): z.ZodString {
  return z
    .string()
    .min(options.min ?? 0)
    .max(options.max)
    .refine((value) => !hasControlCharacter(value), CONTROL_CHARACTER_MESSAGE);
}
