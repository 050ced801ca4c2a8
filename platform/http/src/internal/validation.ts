import { ValidationError } from '@holdfast/kernel';
import type { z } from 'zod';
import { inspectRequestValue } from './json-shape.js';

/** One failed field: where (`body.name`, `query.page`, `body.items[0].id`) and what is wrong. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** Renders a zod issue path under its request part: `body` + `['items', 0, 'id']` -> `body.items[0].id`. */
export function formatIssuePath(part: string, path: readonly PropertyKey[]): string {
  let rendered = part;
  for (const segment of path) {
    rendered += typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`;
  }
  return rendered;
}

/**
 * zod 4 prefixes type errors with "Invalid input: "; the field path already says where, so the prefix only
 * adds noise to `body.name: expected string, received number`.
 */
function issueMessage(issue: z.core.$ZodIssue): string {
  return issue.message.replace(/^Invalid input: /, '');
}

/** Builds the one 400 error of the API from a list of issues. */
export function invalidRequest(issues: ValidationIssue[]): ValidationError {
  const summary = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return new ValidationError(`Invalid request: ${summary}`, issues);
}

/**
 * Finds, at any depth and without recursion, what no route takes: keys such as `__proto__`, nesting deeper than the
 * limit, NUL, lone surrogates and control characters. They are rejected rather than silently dropped so a client
 * learns its payload was not taken as sent.
 */
export function findRefusedContent(value: unknown, part: string): ValidationIssue[] {
  return inspectRequestValue(value, part !== 'body').map((problem) => ({ path: formatIssuePath(part, problem.path), message: problem.message }));
}

/** The three request parts a route may declare a schema for. */
export type RequestPart = 'params' | 'query' | 'body';

/** Parses each present part with its schema; collects every issue of every part before failing once. */
export async function parseRequestParts(
  parts: Array<{ part: RequestPart; schema: z.ZodType | undefined; value: unknown }>,
): Promise<Record<RequestPart, unknown>> {
  const parsed: Record<RequestPart, unknown> = { params: undefined, query: undefined, body: undefined };
  const issues: ValidationIssue[] = [];
  for (const { part, schema, value } of parts) {
    const forbidden = findRefusedContent(value, part);
    if (forbidden.length > 0) {
      issues.push(...forbidden);
      continue;
    }
    if (!schema) {
      parsed[part] = value;
      continue;
    }
    const result = await schema.safeParseAsync(value);
    if (result.success) {
      parsed[part] = result.data;
    } else {
      for (const issue of result.error.issues) {
        issues.push({ path: formatIssuePath(part, issue.path), message: issueMessage(issue) });
      }
    }
  }
  if (issues.length > 0) throw invalidRequest(issues);
  return parsed;
}
