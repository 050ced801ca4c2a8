import {
  AdapterError,
  TOKENS,
  inject,
  injectable,
  type NamingContext,
  type NamingStrategy,
  type PatternValidation,
} from '@holdfast/sdk';
import type { NamingConfig } from './config.js';
import { renderDateToken, wallClock } from './internal/date-tokens.js';
import type { FieldToken, Segment } from './internal/pattern.js';
import { finishName, sanitizeValue, type RenderedPart } from './internal/safe-name.js';
import { checkPattern } from './internal/validate.js';

const SEPARATORS = ['_', '-'];

/**
 * Renders `{job_name}_yyyy-MM-dd_HH-mm-ss`-style patterns. Date tokens are resolved on the pattern first and the
 * names substituted afterwards, so a job called "Immich" or "backup_yyyy" keeps its name.
 */
@injectable()
export class TemplateNaming implements NamingStrategy {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: NamingConfig) {}

  validate(pattern: string): PatternValidation {
    const checked = checkPattern(pattern);
    return checked.ok ? { ok: true } : { ok: false, message: checked.message };
  }

  render(pattern: string, context: NamingContext): string {
    const checked = checkPattern(pattern);
    if (!checked.ok) throw new AdapterError({ kind: 'naming', id: 'template' }, 'CONFIG', `invalid naming pattern: ${checked.message}`);
    const local = wallClock(context.date, context.timezone);
    const values: Record<FieldToken, string> = {
      job_name: sanitizeValue(context.jobName ?? '', this.config.replacement),
      db_name: sanitizeValue(context.databaseName ?? '', this.config.replacement),
      chain: sanitizeValue(context.chain ?? '', this.config.replacement),
    };
    const parts = dropEmptyFields(checked.segments, values).map((segment): RenderedPart => {
      if (segment.kind === 'literal') return { text: segment.text, shrinkable: false };
      if (segment.kind === 'date') return { text: renderDateToken(segment.token, local), shrinkable: false };
      return { text: values[segment.name], shrinkable: true };
    });
    return finishName(parts, this.config.maxLength);
  }
}

/**
 * An empty `{chain}` (or `{db_name}`) vanishes together with one adjacent `_` or `-` of the pattern: the one before
 * it if there is one, else the one after it. Works on a copy; the parsed segments are not changed.
 */
function dropEmptyFields(segments: readonly Segment[], values: Record<FieldToken, string>): Segment[] {
  const result: Segment[] = segments.map((segment) => ({ ...segment }));
  for (let i = 0; i < result.length; i++) {
    const segment = result[i]!;
    if (segment.kind !== 'field' || segment.name === 'job_name' || values[segment.name] !== '') continue;
    const before = result[i - 1];
    const after = result[i + 1];
    if (before?.kind === 'literal' && SEPARATORS.includes(before.text.at(-1)!)) before.text = before.text.slice(0, -1);
    else if (after?.kind === 'literal' && SEPARATORS.includes(after.text[0]!)) after.text = after.text.slice(1);
    result.splice(i, 1);
    i--;
  }
  return result;
}
