import {
  TOKENS,
  defineNamingStrategy,
  inject,
  injectable,
  z,
  type NamingContext,
  type NamingStrategy,
  type PatternValidation,
} from '@holdfast/sdk';
import { describe, expect, it } from 'vitest';
import { findCheck } from '../src/checks.js';
import { assertSafeFileName, namingStrategyChecks } from '../src/naming.js';

// A small but correct strategy: `{job}` and `{stamp}` (yyyyMMddHHmmss in the zone), everything unsafe becomes `_`.
function stamp(date: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${get('year')}${get('month')}${get('day')}${get('hour')}${get('minute')}${get('second')}`;
}

function safe(value: string): string {
  const cleaned = Array.from(value.replace(/[^\p{L}\p{N}_ -]/gu, '_')).slice(0, 80).join('').trim();
  return cleaned === '' ? 'x' : cleaned;
}

function referenceValidate(pattern: string): PatternValidation {
  if (pattern === '') return { ok: false, message: 'pattern is empty' };
  if (!/^[A-Za-z0-9_-]*$/.test(pattern.replaceAll('{job}', '').replaceAll('{stamp}', ''))) return { ok: false, message: 'bad characters' };
  return pattern.includes('{stamp}') ? { ok: true } : { ok: false, message: 'no {stamp}' };
}

function referenceRender(pattern: string, context: NamingContext): string {
  return safe(pattern.replaceAll('{stamp}', stamp(context.date, context.timezone)).replaceAll('{job}', safe(context.jobName)));
}

type Render = (pattern: string, context: NamingContext) => string;

function strategyWith(render: Render, validate: (pattern: string) => PatternValidation = referenceValidate) {
  @injectable()
  class Strategy implements NamingStrategy {
    constructor(@inject(TOKENS.AdapterConfig) readonly config: object) {}
    render(pattern: string, context: NamingContext): string {
      return render(pattern, context);
    }
    validate(pattern: string): PatternValidation {
      return validate(pattern);
    }
  }
  return defineNamingStrategy({ id: 'reference', displayName: 'Reference', configSchema: z.object({}), capabilities: {}, implementation: Strategy });
}

function checks(render: Render, validate?: (pattern: string) => PatternValidation) {
  return namingStrategyChecks({
    definition: strategyWith(render, validate),
    patterns: ['{job}_{stamp}', '{stamp}'],
    invalidPatterns: ['{job}', 'a/{stamp}'],
    patternFragments: ['{job}', '{stamp}', '_', '-', '/', '{', 'x'],
    numRuns: 60,
    seed: 424242,
  });
}

async function outcome(render: Render, check: string, validate?: (pattern: string) => PatternValidation): Promise<string> {
  try {
    await findCheck(checks(render, validate), check).run();
    return 'passed';
  } catch (error) {
    return (error as Error).message;
  }
}

describe('naming conformance suite', () => {
  it('passes a correct strategy on every check', async () => {
    const all = checks(referenceRender);
    expect(all.map((c) => c.name)).toHaveLength(6);
    for (const check of all) await expect(check.run(), check.name).resolves.toBeUndefined();
  });

  it('catches a strategy that lets path separators and control characters through', async () => {
    const raw: Render = (pattern, context) => pattern.replaceAll('{stamp}', stamp(context.date, context.timezone)).replaceAll('{job}', context.jobName);
    expect(await outcome(raw, 'safe file name')).toMatch(/contains a path separator|control character|is empty|directory reference|lone surrogate/);
  });

  it('catches a strategy that ignores the time zone', async () => {
    const utcOnly: Render = (pattern, context) => referenceRender(pattern, { ...context, timezone: 'UTC' });
    expect(await outcome(utcOnly, 'time zone')).toMatch(/but the same wall-clock time in UTC rendered/);
  });

  it('catches a strategy that reads the clock instead of the context', async () => {
    let calls = 0;
    const impure: Render = (pattern, context) => `${referenceRender(pattern, context)}-${calls++}`;
    expect(await outcome(impure, 'is pure')).toMatch(/rendering .* twice gave/);
    const mutating: Render = (pattern, context) => {
      (context as { jobName: string }).jobName = 'changed';
      return referenceRender(pattern, context);
    };
    expect(await outcome(mutating, 'is pure')).toMatch(/render changed the context/);
  });

  it('catches a validate that accepts everything, throws, or rejects without a message', async () => {
    const acceptsAll = () => ({ ok: true }) as const;
    expect(await outcome(referenceRender, 'rejects the empty pattern', acceptsAll)).toMatch(/invalid pattern "" was accepted/);
    const throws = (pattern: string) => {
      if (pattern.includes('{')) throw new Error('boom');
      return referenceValidate(pattern);
    };
    expect(await outcome(referenceRender, 'is consistent', throws)).toMatch(/boom/);
    const silent = (pattern: string): PatternValidation => (referenceValidate(pattern).ok ? { ok: true } : { ok: false, message: '' });
    expect(await outcome(referenceRender, 'is consistent', silent)).toMatch(/without a message/);
    const rejectsValid = (pattern: string): PatternValidation => (pattern === '{stamp}' ? { ok: false, message: 'no' } : referenceValidate(pattern));
    expect(await outcome(referenceRender, 'accepts every given pattern', rejectsValid)).toMatch(/valid pattern "\{stamp\}" was rejected: no/);
  });

  it('catches a validate that accepts a pattern render cannot make safe', async () => {
    const lax = (pattern: string): PatternValidation => (pattern === '' ? { ok: false, message: 'empty' } : { ok: true });
    const literal: Render = (pattern, context) => pattern.replaceAll('{stamp}', stamp(context.date, context.timezone));
    expect(await outcome(literal, 'is consistent', lax)).toMatch(/contains a path separator|control character|directory reference|lone surrogate|is empty|bytes long/);
  });

  it('assertSafeFileName names each kind of unsafe name', () => {
    expect(() => assertSafeFileName('')).toThrow(/is empty/);
    expect(() => assertSafeFileName('a/b')).toThrow(/path separator/);
    expect(() => assertSafeFileName('a\\b')).toThrow(/path separator/);
    expect(() => assertSafeFileName('a\u0000b')).toThrow(/control character/);
    expect(() => assertSafeFileName('..')).toThrow(/directory reference/);
    expect(() => assertSafeFileName('a\uD800')).toThrow(/lone surrogate/);
    expect(() => assertSafeFileName('é'.repeat(128))).toThrow(/256 bytes long/);
    expect(() => assertSafeFileName('Immich_2026-11-19_10-00-00')).not.toThrow();
  });
});
