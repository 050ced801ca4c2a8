import { describe, expect, it } from 'vitest';
import { defaultPayload, renderTemplate, type TemplateValues } from '../src/index.js';

const values: TemplateValues = {
  title: 'Backup "nightly" failed',
  message: 'disk full\nat C:\\backups',
  success: false,
  color: '#ef4444',
  timestamp: '2026-11-20T10:00:00.000Z',
  eventType: 'backup_failure',
  fields: [
    { name: 'Job', value: 'nightly', inline: true },
    { name: 'Error', value: '' },
  ],
};

describe('renderTemplate', () => {
  it('writes JSON values outside strings: quoted strings, a boolean, a fields array', () => {
    const rendered = renderTemplate('{"t": {{title}}, "ok": {{success}}, "f": {{ fields }}}', values);
    expect(JSON.parse(rendered)).toEqual({
      t: 'Backup "nightly" failed',
      ok: false,
      f: [
        { name: 'Job', value: 'nightly', inline: true },
        { name: 'Error', value: '-', inline: false },
      ],
    });
  });

  it('escapes values inside strings so quotes, newlines and backslashes stay valid JSON', () => {
    const rendered = renderTemplate('{"text": "[{{eventType}}] {{title}}: {{message}} ({{success}})"}', values);
    expect(JSON.parse(rendered)).toEqual({ text: '[backup_failure] Backup "nightly" failed: disk full\nat C:\\backups (false)' });
  });

  it('renders fields inside a string as "name: value" lines', () => {
    expect(JSON.parse(renderTemplate('{"s": "{{fields}}"}', values))).toEqual({ s: 'Job: nightly\nError: -' });
  });

  it('does not treat an escaped quote as the end of a string', () => {
    const rendered = renderTemplate('{"s": "say \\"{{title}}\\""}', values);
    expect(JSON.parse(rendered)).toEqual({ s: 'say "Backup "nightly" failed"' });
  });

  it('writes null for an unknown outcome outside strings and nothing inside', () => {
    const unknown = { ...values, success: null };
    expect(JSON.parse(renderTemplate('{"a": {{success}}, "b": "x{{success}}y"}', unknown))).toEqual({ a: null, b: 'xy' });
  });

  it('rejects unknown placeholders, naming them and the known ones', () => {
    expect(() => renderTemplate('{"a": {{secretToken}}}', values)).toThrow(
      'unknown placeholder {{secretToken}} (known: title, message, success, color, timestamp, eventType, fields)',
    );
  });

  it('rejects a template that is not JSON without quoting its values', () => {
    expect(() => renderTemplate('{"a": {{title}}', values)).toThrow(/^the payload template does not render to valid JSON/);
    let message = '';
    try {
      renderTemplate('{"a": {{title}} oops}', values);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^the payload template does not render to valid JSON/);
    expect(message).not.toContain('nightly');
  });
});

describe('defaultPayload', () => {
  it('sends every variable as JSON, with dashes for empty field values', () => {
    expect(JSON.parse(defaultPayload(values))).toEqual({
      title: 'Backup "nightly" failed',
      message: 'disk full\nat C:\\backups',
      success: false,
      color: '#ef4444',
      timestamp: '2026-11-20T10:00:00.000Z',
      eventType: 'backup_failure',
      fields: [
        { name: 'Job', value: 'nightly', inline: true },
        { name: 'Error', value: '-', inline: false },
      ],
    });
  });
});
