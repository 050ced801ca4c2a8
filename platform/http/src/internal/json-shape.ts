/** Deepest nesting of arrays and objects a request body may have; real bodies of this API stay under 6. */
export const MAX_JSON_DEPTH = 32;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The nesting depth of JSON text, measured with one linear scan (no recursion, no parse): brackets inside strings do
 * not count. Stops as soon as the depth passes {@link MAX_JSON_DEPTH}. Malformed text gets some number; the parser
 * refuses it afterwards anyway.
 */
export function checkJsonNesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let isInString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (isInString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) isInString = false;
      continue;
    }
    if (code === QUOTE) isInString = true;
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > MAX_JSON_DEPTH) return deepest;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) depth--;
  }
  return deepest;
}

/** Keys that could reach `Object.prototype` once a parsed object is merged or spread somewhere downstream. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** A lone UTF-16 surrogate: a high one not followed by a low one, or a low one without a high one before it. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** C0 controls, DEL and C1 controls. */
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
/** The same without TAB, LF and CR, which free text (templates, keys in PEM form, descriptions) may hold. */
const CONTROL_EXCEPT_WHITESPACE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Why a string cannot be taken, or undefined when it can. */
export function textProblem(text: string, isLine: boolean): string | undefined {
  if (text.includes('\u0000')) return 'must not contain a NUL character';
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone UTF-16 surrogate (not valid Unicode)';
  if ((isLine ? CONTROL_CHARACTER : CONTROL_EXCEPT_WHITESPACE).test(text)) return 'must not contain control characters';
  return undefined;
}

/** One problem found by {@link inspectRequestValue}: the path segments below the request part and the message. */
export interface ShapeProblem {
  path: PropertyKey[];
  message: string;
}

/**
 * Walks a parsed request part with an explicit stack (never recursion, whatever the depth) and reports, at any depth:
 * forbidden keys (`__proto__`...), nesting deeper than {@link MAX_JSON_DEPTH}, and strings the databases cannot hold
 * or that forge lines: NUL, lone surrogates and control characters. Keys, and every string of `params` and `query`
 * (`isLineText`), are single-line text where even TAB/LF/CR are refused; body values may hold TAB/LF/CR, and the
 * route schemas refuse them in names and paths (`lineText` of the kernel).
 */
export function inspectRequestValue(value: unknown, isLineText: boolean, limit = 50): ShapeProblem[] {
  const problems: ShapeProblem[] = [];
  // A key's own problem rides the stack too, so problems come out in document order.
  const stack: Array<{ node: unknown; path: PropertyKey[]; problem?: string }> = [{ node: value, path: [] }];
  while (stack.length > 0 && problems.length < limit) {
    const { node, path, problem: keyProblem } = stack.pop()!;
    if (keyProblem) {
      problems.push({ path, message: keyProblem });
      continue;
    }
    if (typeof node === 'string') {
      const problem = textProblem(node, isLineText);
      if (problem) problems.push({ path, message: problem });
      continue;
    }
    if (typeof node !== 'object' || node === null) continue;
    if (path.length >= MAX_JSON_DEPTH) {
      problems.push({ path, message: `nests deeper than ${MAX_JSON_DEPTH} levels` });
      continue;
    }
    if (Array.isArray(node)) {
      for (let index = node.length - 1; index >= 0; index--) stack.push({ node: node[index], path: [...path, index] });
      continue;
    }
    const keys = Object.keys(node);
    for (let index = keys.length - 1; index >= 0; index--) {
      const key = keys[index]!;
      const problem = FORBIDDEN_KEYS.has(key) ? 'forbidden key' : textProblem(key, true);
      stack.push({
        node: (node as Record<string, unknown>)[key],
        path: [...path, key],
        ...(problem ? { problem: problem === 'forbidden key' ? problem : `key ${problem}` } : {}),
      });
    }
  }
  return problems;
}
