// The kit is copied to users as loose files and run with a plain `node` (>= 18): every script may import only Node's
// built-in modules and its sibling files, and every sibling it imports must be in the package.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const kit = new URL('../kit/', import.meta.url);
const scripts = (await readdir(kit)).filter((name) => name.endsWith('.mjs')).sort();

describe('the recovery kit files', () => {
  it('hold the script, its modules and the README that ships inside the kit', () => {
    expect(scripts).toEqual(expect.arrayContaining(['holdfast-decrypt.mjs', 'hfenc.mjs', 'archive-reader.mjs', 'archive-chain.mjs', 'archive-extract.mjs', 'restore-target.mjs', 'containment.mjs', 'decompress.mjs', 'tar-unpack.mjs', 'pitr-restore.mjs', 'pitr-wal.mjs', 'pitr-settings.mjs', 'pitr-server.mjs', 'mysql-pitr.mjs', 'mysql-base.mjs', 'mysql-binlog.mjs', 'mysql-replay-watch.mjs', 'mysql-server.mjs']));
    expect(existsSync(new URL('README.md', kit))).toBe(true);
  });

  it.each(scripts)('%s imports only node: built-ins and sibling kit files', async (name) => {
    const text = await readFile(new URL(name, kit), 'utf8');
    const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => match[1] ?? match[2] ?? '');
    const bad = specifiers.filter((specifier) => !specifier.startsWith('node:') && !(/^\.\/[\w.-]+\.mjs$/.test(specifier) && existsSync(new URL(specifier, kit))));
    expect(bad).toEqual([]);
  });

  it.each(scripts)('%s parses as a module (node --check)', (name) => {
    expect(() => execFileSync(process.execPath, ['--check', new URL(name, kit).pathname], { stdio: 'pipe' })).not.toThrow();
  });
});

describe('the script given an age file (a backup of a public-key profile)', () => {
  it('exits 4 and names the age tool instead of calling the file damaged', async () => {
    const { spawnSync } = await import('node:child_process');
    // The documented age test vector (docs/formats/encryption.md, "Test vectors (age)"): any key file will do.
    const doc = await readFile(new URL('../../../docs/formats/encryption.md', import.meta.url), 'utf8');
    const vectors = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(doc.slice(doc.indexOf('## Test vectors (age)')))![1]!) as { vectors: Array<{ ciphertextBase64: string }> };
    const result = spawnSync(process.execPath, [new URL('holdfast-decrypt.mjs', kit).pathname, '-'], {
      input: Buffer.from(vectors.vectors[0]!.ciphertextBase64, 'base64'),
      env: { ...process.env, HOLDFAST_KEY: '00'.repeat(32) },
      encoding: 'utf8',
    });
    expect(result.status).toBe(4);
    expect(result.stderr).toMatch(/age file.*age -d -i key\.txt/);
  });
});
