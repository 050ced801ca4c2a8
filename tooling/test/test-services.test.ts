// Regression (issue 10.14): `npm test` had hidden prerequisites (a PostgreSQL `root` role, an sshd it installed and
// left running) that the README did not name. Every launcher is wired into ensure.mjs, every service it starts is
// listed in the README's "Tests" table, and a service that cannot start ends the run with one line naming it.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM script without type declarations
import { ensureTestServices, TEST_SERVICES } from '../test-services/ensure.mjs';

const folder = new URL('../test-services/', import.meta.url);
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const testsSection = readme.slice(readme.indexOf('## Tests'), readme.indexOf('## Layout'));

describe('test services', () => {
  it('ensure.mjs imports every launcher in tooling/test-services', () => {
    const ensure = readFileSync(new URL('ensure.mjs', folder), 'utf8');
    const launchers = readdirSync(folder).filter((name) => name.endsWith('.mjs') && !['ensure.mjs', 'stop.mjs'].includes(name));
    expect(launchers.length).toBeGreaterThan(5);
    for (const launcher of launchers) expect(ensure, `${launcher} is not started by ensure.mjs`).toContain(`from './${launcher}'`);
  });

  it("the README's Tests section names every service ensure.mjs sets up", () => {
    const labels = (TEST_SERVICES as [string, unknown][]).map(([label]) => label.split(' (')[0]!.split(' + ')[0]!);
    expect(labels).toContain('PostgreSQL');
    for (const label of labels) {
      const word = label.replace(/ CLI$/, '').split(' ').find((part) => part.length > 3) ?? label;
      expect(testsSection, `README "Tests" does not mention ${label}`).toContain(word);
    }
    expect(testsSection).toContain('role');
    expect(testsSection).toContain('test:services:stop');
  });

  it('ends with one line naming the service that cannot start, after reporting the ones that did', async () => {
    const lines: string[] = [];
    const services = [
      ['first (ok)', async () => 'already running'],
      ['broken thing (127.0.0.1:1)', async () => { throw new Error('cannot install broken-thing: E: Unable to locate package\nmore detail'); }],
      ['never reached', async () => 'started'],
    ];
    await expect(ensureTestServices(services, (line: string) => lines.push(line))).rejects.toThrow(
      /^broken thing \(127\.0\.0\.1:1\): cannot install broken-thing: E: Unable to locate package$/,
    );
    expect(lines.filter((line) => line.includes('first (ok) already running'))).toHaveLength(1);
    expect(lines.join('')).not.toContain('never reached');
  });
});
