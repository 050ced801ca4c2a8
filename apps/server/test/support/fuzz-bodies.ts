// Seeded generator of malformed request bodies for the fuzz test: every body carries at least one poison (a NUL,
// nesting past the limit, invalid UTF-8, a lone surrogate, a control character, a wrong type, a huge string, an
// unknown key, a prototype key or broken JSON), so every one of them must be refused.

/** mulberry32: small, fast and reproducible from one 32-bit seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Schema = Record<string, any>;

/** Resolves `$ref`s of the OpenAPI document's components. */
export function resolver(document: Schema): (schema: Schema | undefined) => Schema {
  return (schema) => {
    let current = schema ?? {};
    for (let hops = 0; current.$ref && hops < 10; hops++) {
      const name = String(current.$ref).split('/').pop()!;
      current = document.components?.schemas?.[name] ?? {};
    }
    return current;
  };
}

/** A plausible value for `schema` (valid where easy); the poison is added afterwards. */
export function sampleOf(schema: Schema | undefined, resolve: (s: Schema | undefined) => Schema, depth = 0): unknown {
  const s = resolve(schema);
  if (depth > 4) return null;
  const variants = s.anyOf ?? s.oneOf ?? s.allOf;
  if (Array.isArray(variants) && variants.length > 0) return sampleOf(variants[0], resolve, depth + 1);
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of s.required ?? []) out[key] = sampleOf(s.properties?.[key], resolve, depth + 1);
      return out;
    }
    case 'array':
      return (s.minItems ?? 0) > 0 ? [sampleOf(s.items, resolve, depth + 1)] : [];
    case 'string':
      if (s.format === 'email') return 'fuzz@example.test';
      if (s.format === 'date-time') return '2026-01-01T00:00:00Z';
      return 'f'.repeat(Math.max(1, s.minLength ?? 1));
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      return {};
  }
}

/** A value of another JSON type than `schema` wants. */
function wrongTypeFor(schema: Schema, resolve: (s: Schema | undefined) => Schema, pick: <T>(items: T[]) => T): unknown {
  const type = resolve(schema).type;
  if (type === 'string') return pick([42, true, [], {}]);
  if (type === 'integer' || type === 'number') return pick(['7', true, [], 'x']);
  if (type === 'boolean') return pick(['true', 1, []]);
  if (type === 'array') return pick([{}, 'x', 3]);
  if (type === 'object') return pick([[], 'x', 3]);
  return pick([[[]], 'x', -1]);
}

/** One fuzz body: the bytes to send and the poison it carries (for failure messages). */
export interface FuzzBody {
  poison: string;
  bytes: string | Buffer;
}

const POISONS = ['nul', 'deep', 'utf8', 'surrogate', 'control', 'wrong-types', 'top-level-type', 'huge', 'unknown-key', 'proto-key', 'broken-json'] as const;

/** Builds the `index`-th body for a route whose request body schema is `schema`. */
export function fuzzBody(schema: Schema, resolve: (s: Schema | undefined) => Schema, random: () => number): FuzzBody {
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const base = sampleOf(schema, resolve);
  const body: Record<string, unknown> = typeof base === 'object' && base !== null && !Array.isArray(base) ? { ...(base as object) } : {};
  const properties = Object.keys(resolve(schema).properties ?? {});
  const field = properties.length > 0 ? pick(properties) : 'name';
  const poison = pick([...POISONS]);
  switch (poison) {
    case 'nul':
      body[field] = pick(['a\u0000b', '\u0000', 'x'.repeat(10) + '\u0000']);
      if (random() < 0.3) body[`k\u0000${field}`] = 1;
      return { poison, bytes: JSON.stringify(body) };
    case 'deep': {
      const levels = pick([33, 64, 1_000, 100_000]);
      const open = random() < 0.5 ? '['.repeat(levels) : '{"a":'.repeat(levels);
      const close = open.startsWith('[') ? ']'.repeat(levels) : '}'.repeat(levels);
      const text = JSON.stringify({ ...body, [field]: '__DEEP__' });
      return { poison: `${poison}(${levels})`, bytes: text.replace('"__DEEP__"', `${open}1${close}`) };
    }
    case 'utf8': {
      const bad = pick([[0xc3, 0x28], [0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0x80], [0xf4, 0x90, 0x80, 0x80]]);
      const text = JSON.stringify({ ...body, [field]: '__BAD__' });
      const [before, after] = text.split('__BAD__') as [string, string];
      return { poison, bytes: Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]) };
    }
    case 'surrogate':
      return { poison, bytes: JSON.stringify({ ...body, [field]: '__S__' }).replace('__S__', pick(['\\ud800', 'x\\udfff', '\\udbff\\u0041'])) };
    case 'control':
      body[field] = pick(['a\u0007b', '\u001b[31mred', 'x\u007f', 'back\u0008space']);
      return { poison, bytes: JSON.stringify(body) };
    case 'wrong-types': {
      const wrong: Record<string, unknown> = {};
      const props = resolve(schema).properties ?? {};
      for (const key of properties) wrong[key] = wrongTypeFor(props[key], resolve, pick);
      if (properties.length === 0) wrong.zzUnknown = 1;
      return { poison, bytes: JSON.stringify(wrong) };
    }
    case 'top-level-type':
      return { poison, bytes: pick(['[]', '"text"', '42', 'null', 'true', '[{"a":1}]', '[[]]']) };
    case 'huge': {
      const size = pick([70_000, 300_000, 1_100_000]);
      body[field] = 'h'.repeat(size);
      body.zzUnknownAlongHuge = true;
      return { poison: `${poison}(${size})`, bytes: JSON.stringify(body) };
    }
    case 'unknown-key': {
      const candidates = ['zzUnknown', 'isSuperAdmin', 'id', 'createdAt', 'userId', 'role'].filter((key) => !properties.includes(key));
      body[pick(candidates)] = pick([true, 'x', 1]);
      return { poison, bytes: JSON.stringify(body) };
    }
    case 'proto-key': {
      const key = pick(['__proto__', 'constructor', 'prototype']);
      const text = JSON.stringify({ ...body, [field]: { __K__: { isAdmin: true } } });
      return { poison: `${poison}(${key})`, bytes: random() < 0.5 ? text.replace('"__K__"', `"${key}"`) : `{"${key}":{"isAdmin":true},${text.slice(1)}` };
    }
    case 'broken-json':
    default:
      return { poison: 'broken-json', bytes: pick(['{', '{"a":', '{"a":1,}', "{'a':1}", '{"a":01}', '{"a":NaN}', JSON.stringify(body).slice(0, -1)]) };
  }
}
