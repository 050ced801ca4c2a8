// Issue 20: one file of a seekable archive restored "as a download (single-use link, SPEC rules)". End to end on the
// real server (PostgreSQL, so the links live in the shared `download_tokens` table and its `archive_path` column):
// an encrypted directory job in an incremental chain, run twice; an API key holding only storage:read and
// storage:download asks for single files of the second (incremental) backup, including one whose bytes the FIRST
// backup holds, and fetches them anonymously, once. Every refused request is a 400 naming the problem, and no link
// is created for it.
import { randomBytes } from 'node:crypto';
import { link, mkdir, mkdtemp, rm, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creator, settledExecution } from './support/api-steps.js';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

describe('seekable archives: one file as a single-use download (issue 20)', () => {
  let server: FullServer;
  let db: pg.Pool;
  let admin: Caller;
  let key: Caller;
  let work: string;
  let sourceDir: string;
  let storageDir: string;
  let storageId: string;
  let first: string;
  let second: string;
  const report = randomBytes(1024 * 1024 + 123);
  const changedNotes = Buffer.from('notes, changed before the second run\n');
  const resume = Buffer.from('a name with accents\n');

  let clock = 1_700_000_000;
  const write = async (relative: string, content: string | Buffer) => {
    await writeFile(join(sourceDir, relative), content);
    clock += 10;
    await utimes(join(sourceDir, relative), clock, clock);
  };
  const settled = (executionId: string): Promise<any> => settledExecution(server, admin, executionId);
  const create = (path: string, body: unknown) => creator(server, () => admin)(path, body);
  const runJob = async (jobId: string): Promise<string> => {
    const answer = await server.call('POST', `/api/jobs/${jobId}/run`, admin, {});
    expect(answer.status).toBe(200);
    const run = await settled(answer.body.executionId);
    expect(run.status, JSON.stringify(run.logs?.slice(-4))).toBe('Success');
    return run.path as string;
  };
  const downloadUrl = (body: Record<string, unknown>) => server.call('POST', `/api/storage/${storageId}/download-url`, key, body);
  /** A public download: plain fetch, no credentials at all. */
  const fetchPublic = async (url: string) => {
    const response = await fetch(`${server.url}${url}`);
    return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), headers: response.headers };
  };
  const tokenRows = async (): Promise<{ token_hash: string; archive_path: string | null }[]> => (await db.query('SELECT token_hash, archive_path FROM download_tokens')).rows;
  const urlAudits = async (): Promise<any[]> => {
    const answer = await server.call('GET', '/api/audit?resource=storage', admin);
    expect(answer.status).toBe(200);
    return answer.body.entries.filter((entry: { action: string }) => entry.action === 'storage.download-url');
  };

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-seekable-download-'));
    sourceDir = join(work, 'src');
    storageDir = join(work, 'storage');
    await mkdir(join(sourceDir, 'docs', 'empty-folder'), { recursive: true });
    await mkdir(storageDir);
    await write('docs/report.pdf', report);
    await write('notes.txt', 'notes as they were in the first run\n');
    await write('gone.txt', 'deleted before the second run\n');
    await write('docs/résumé.txt', resume);
    await symlink('docs/report.pdf', join(sourceDir, 'link-to-report'));
    await link(join(sourceDir, 'docs/report.pdf'), join(sourceDir, 'report-hardlink.pdf'));

    server = await startFullServer('postgresql');
    db = new pg.Pool({ connectionString: server.databaseUrl, max: 2 });
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const source = await create('/api/adapters', { name: 'tree', type: 'database', adapterId: 'directory', config: { paths: [sourceDir] } });
    const storage = await create('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: storageDir } });
    storageId = storage.id;
    const vault = await create('/api/vault', { name: 'download key' });
    const job = await create('/api/jobs', {
      name: 'tree',
      schedule: '0 3 * * *',
      sourceId: source.id,
      compression: 'ZSTD',
      archiveFormat: 'SEEKABLE',
      fullEveryRuns: 5,
      encryptionProfileId: vault.id,
      destinations: [{ configId: storage.id, priority: 0 }],
    });
    const issued = await create('/api/api-keys', { name: 'downloader', permissions: ['storage:read', 'storage:download'] });
    key = { bearer: issued.key ?? issued.rawKey };

    first = await runJob(job.id);
    await write('notes.txt', changedNotes);
    await write('added.txt', 'added in the second run\n');
    await unlink(join(sourceDir, 'gone.txt'));
    clock += 10;
    await utimes(sourceDir, clock, clock);
    second = await runJob(job.id);
  }, 240_000);

  afterAll(async () => {
    await db?.end();
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('keeps the unchanged file in the first backup and the changed one in the second (the chain the downloads read)', async () => {
    expect(first).toMatch(/\.hfa\.enc$/);
    expect(second).toMatch(/\.hfa\.enc$/);
    const listing = await server.call('GET', `/api/storage/${storageId}/archive?file=${encodeURIComponent(second)}`, key);
    expect(listing.status, JSON.stringify(listing.body)).toBe(200);
    const byPath = new Map(listing.body.entries.map((entry: any) => [entry.path, entry]));
    expect(listing.body.chain).toMatchObject({ sequence: 1, baseArchives: [first] });
    expect(byPath.get('0-src/docs/report.pdf')).toMatchObject({ kind: 'file', size: report.length, archive: first });
    expect(byPath.get('0-src/notes.txt')).toMatchObject({ kind: 'file', archive: second });
    expect(byPath.has('0-src/gone.txt')).toBe(false);
  });

  it('streams a file the first backup holds, asked on the second, to an anonymous client exactly once', async () => {
    const url = await downloadUrl({ file: second, path: '0-src/docs/report.pdf' });
    expect(url.status, JSON.stringify(url.body)).toBe(200);
    expect(url.body).toMatchObject({ success: true, expiresIn: '5 minutes', singleUse: true });
    expect(await tokenRows()).toContainEqual({ token_hash: expect.any(String), archive_path: '0-src/docs/report.pdf' });
    const download = await fetchPublic(url.body.url);
    expect(download.status).toBe(200);
    expect(download.bytes.equals(report)).toBe(true);
    expect(download.headers.get('content-disposition')).toBe('attachment; filename=report.pdf');
    expect(download.headers.get('content-length')).toBe(String(report.length));
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect((await fetchPublic(url.body.url)).status).toBe(401);
    // The audit names the file of the archive that was granted.
    const audit = (await urlAudits()).find((entry) => JSON.parse(entry.details).path === '0-src/docs/report.pdf');
    expect(JSON.parse(audit.details)).toEqual({ file: second, decrypt: true, database: null, path: '0-src/docs/report.pdf' });
  });

  it('gives the content each snapshot holds: the changed file, a deleted one only from the first backup', async () => {
    const fetchFile = async (file: string, path: string) => {
      const url = await downloadUrl({ file, path });
      expect(url.status, JSON.stringify(url.body)).toBe(200);
      const download = await fetchPublic(url.body.url);
      expect(download.status).toBe(200);
      return download;
    };
    const changed = await fetchFile(second, '0-src/notes.txt');
    expect(changed.bytes.equals(changedNotes)).toBe(true);
    expect(changed.headers.get('content-length')).toBe(String(changedNotes.length));
    expect((await fetchFile(first, '0-src/notes.txt')).bytes.toString()).toBe('notes as they were in the first run\n');
    expect((await fetchFile(first, '0-src/gone.txt')).bytes.toString()).toBe('deleted before the second run\n');
    const unicode = await fetchFile(second, '0-src/docs/résumé.txt');
    expect(unicode.bytes.equals(resume)).toBe(true);
    expect(unicode.headers.get('content-disposition')).toContain("filename*=UTF-8''r%C3%A9sum%C3%A9.txt");
  });

  it('downloads a hard link as the content of the file it links to', async () => {
    const listing = await server.call('GET', `/api/storage/${storageId}/archive?file=${encodeURIComponent(second)}`, key);
    const hardlink = listing.body.entries.find((entry: any) => entry.kind === 'hardlink');
    expect(hardlink, 'the directory source records the second name of the inode as a hard link').toBeDefined();
    const url = await downloadUrl({ file: second, path: hardlink.path });
    expect(url.status, JSON.stringify(url.body)).toBe(200);
    const download = await fetchPublic(url.body.url);
    expect(download.status).toBe(200);
    expect(download.bytes.equals(report)).toBe(true);
    expect(download.headers.get('content-length')).toBe(String(report.length));
    expect(download.headers.get('content-disposition')).toContain(hardlink.path.split('/').pop());
  });

  it('refuses what is not one file of a seekable archive with 400 naming the problem, and creates no link for it', async () => {
    await writeFile(join(storageDir, 'plain.tar'), 'x');
    await writeFile(join(storageDir, 'plain.tar.meta.json'), JSON.stringify({ formatVersion: 1, createdAt: new Date().toISOString(), sha256: 'a'.repeat(64) }));
    const tokensBefore = new Set((await tokenRows()).map((row) => row.token_hash));
    const auditsBefore = (await urlAudits()).length;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ file: 'plain.tar', path: '0-src/notes.txt' }, /"plain\.tar" is not a seekable archive/],
      [{ file: second, path: '0-src/notes.txt', database: 'shop' }, /either "path" .* or "database" .*, not both/],
      [{ file: second, path: '0-src/notes.txt', decrypt: false }, /a single file can only be taken from an encrypted backup with decrypt=true/],
      [{ file: second, path: '0-src/missing.txt' }, /"0-src\/missing\.txt" is not in the snapshot of/],
      [{ file: second, path: '0-src/gone.txt' }, /"0-src\/gone\.txt" is not in the snapshot of/],
      [{ file: second, path: '0-src/docs' }, /a folder cannot be downloaded as one file; restore it with POST \/api\/storage\/:id\/restore and paths/],
      [{ file: second, path: '0-src/docs/empty-folder/' }, /a folder cannot be downloaded as one file/],
      [{ file: second, path: '0-src/link-to-report' }, /"0-src\/link-to-report" is a symbolic link \(to "docs\/report\.pdf"\)/],
      [{ file: second, path: '0-src/notes\u0007.txt' }, /control character/i],
      [{ file: second, path: '' }, /path/],
      [{ file: second, path: `0-src/${'a'.repeat(4096)}` }, /path/],
    ];
    for (const [body, message] of cases) {
      const answer = await downloadUrl(body);
      expect(answer.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(answer.body.error, JSON.stringify(body).slice(0, 200)).toMatch(message);
    }
    // The minute sweep may remove used tokens meanwhile; no row may be new.
    expect((await tokenRows()).filter((row) => !tokensBefore.has(row.token_hash))).toEqual([]);
    expect((await urlAudits()).length).toBe(auditsBefore);
  });
});
