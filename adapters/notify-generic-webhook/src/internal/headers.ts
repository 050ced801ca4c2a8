/** RFC 9110 token characters: what a header name may contain. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Headers the HTTP client sets itself; overriding them breaks the request. */
const RESERVED = new Set(['content-length', 'transfer-encoding', 'host', 'connection']);

/** A parsed custom header list, or the problems found (line numbers and names only: values may be secrets). */
export type ParsedHeaders = { ok: true; headers: [string, string][] } | { ok: false; problems: string[] };

/** Parses `customHeaders`: one `Key: Value` per line; blank lines are ignored. */
export function parseCustomHeaders(text: string | undefined): ParsedHeaders {
  const headers: [string, string][] = [];
  const problems: string[] = [];
  for (const [index, rawLine] of (text ?? '').split(/\r?\n/).entries()) {
    const line = rawLine.trim();
    if (line === '') continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon).trim();
    const value = colon === -1 ? '' : line.slice(colon + 1).trim();
    const where = `line ${index + 1}`;
    if (colon === -1 || name === '') problems.push(`${where}: expected "Key: Value"`);
    else if (!HEADER_NAME.test(name)) problems.push(`${where}: "${name}" is not a valid header name`);
    else if (RESERVED.has(name.toLowerCase())) problems.push(`${where}: ${name} is set by Holdfast and cannot be overridden`);
    else if (/[\u0000-\u001f\u007f]/.test(value)) problems.push(`${where}: the value of ${name} contains control characters`);
    else headers.push([name, value]);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, headers };
}
