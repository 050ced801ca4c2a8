/** A lone UTF-16 surrogate, which PostgreSQL cannot store in UTF-8 text. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Text both databases can store. Adapter and database errors may quote what they were given, NUL included: the
 * embedded driver cuts SQL at a NUL and PostgreSQL refuses it, and a failed write of a run's failure once left the
 * run Running for good (issue 10.4). A NUL is shown as `\0` and a lone surrogate as U+FFFD.
 */
export function storableText(text: string): string;
export function storableText(text: string | null | undefined): string | null | undefined;
export function storableText(text: string | null | undefined): string | null | undefined {
  if (typeof text !== 'string') return text;
  return text.replaceAll('\u0000', '\\0').replace(LONE_SURROGATE, '\ufffd');
}
