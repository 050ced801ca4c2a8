import { createWriteStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { apiError } from '@holdfast/client';
import { createAgeDecryptStream } from '@holdfast/engine';
import { AgeKeyError, parseAgeIdentity, type AgeIdentity } from '@holdfast/kernel';
import { exitCodeOfStatus, UsageError } from '../remote/exit-codes.js';
import { remote, withJson } from '../remote/action.js';
import { followRun } from '../remote/follow.js';
import { formatBytes, printJson } from '../remote/render.js';
import { formatTable, type CliOutput } from '../output.js';

/** Reads an age key file (as age-keygen writes it); a usage error (not a stack) when it is not one. */
async function readIdentityFile(path: string): Promise<{ text: string; identity: AgeIdentity }> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`--identity: cannot read ${path} (${error.code ?? error.message})`);
  });
  try {
    return { text, identity: parseAgeIdentity(text) };
  } catch (error) {
    if (error instanceof AgeKeyError) throw new UsageError(`--identity: ${path} ${error.message}`);
    throw error;
  }
}

/** `holdfast backups list|download|restore`: backup files on a storage destination. */
export function addBackupsCommand(program: Command, output: CliOutput): void {
  const backups = program.command('backups').description('list, download and restore backup files of a destination');

  withJson(
    backups
      .command('list')
      .description('list the backup files of a destination')
      .argument('<storageId>', 'destination id (see holdfast adapters list --type storage)')
      .option('--refresh', 'read the destination again instead of the cached listing'),
    ['holdfast backups list 7b0d...'],
  ).action(
    remote<{ json?: boolean; refresh?: boolean }>(output, async ({ client, options }, storageId) => {
      const files = await client.unwrap(
        client.api.GET('/api/storage/{id}/files', { params: { path: { id: storageId! }, query: { refresh: options.refresh ? 'true' : 'false' } } }),
      );
      if (options.json) return printJson(output, files);
      const rows = files.map((file) => [file.path, formatBytes(file.size), file.modifiedAt, file.jobName ?? '-', file.locked ? 'locked' : '', file.encrypted ? 'encrypted' : '']);
      output.write(formatTable(['PATH', 'SIZE', 'MODIFIED', 'JOB', 'LOCK', 'ENCRYPTION'], rows));
    }),
  );

  withJson(
    backups
      .command('download')
      .description('download a backup file (decrypted unless --no-decrypt)')
      .argument('<storageId>', 'destination id')
      .argument('<file>', 'path of the backup within the destination (see holdfast backups list)')
      .option('-o, --output <path>', 'where to write it (default: the file name in the current directory)')
      .option('--no-decrypt', 'keep an encrypted backup encrypted')
      .option('--database <name>', 'only this database of a multi-database dump')
      .option('--identity <keyfile>', 'a backup of a public-key profile: decrypt it here with this age key file; the key is never sent'),
    ['holdfast backups download 7b0d... files/2026-11-24.tar.gz -o latest.tar.gz', 'holdfast backups download 7b0d... db/2026-11-24.dump.gz.enc --identity ~/keys/holdfast-age.txt'],
  ).action(
    remote<{ json?: boolean; output?: string; decrypt: boolean; database?: string; identity?: string }>(output, async ({ client, options }, storageId, file) => {
      // With a key file, the server sends the age file as stored and it is decrypted on this machine.
      const local = options.identity ? await readIdentityFile(options.identity) : undefined;
      if (local && options.database) throw new UsageError('--identity decrypts the whole file here; --database needs the server to decrypt (send no --identity)');
      const grant = await client.unwrap(
        client.api.POST('/api/storage/{id}/download-url', {
          params: { path: { id: storageId! } },
          body: { file: file!, decrypt: local ? false : options.decrypt, ...(options.database ? { database: options.database } : {}) },
        }),
      );
      const url = new URL(grant.url, `${client.baseUrl}/`).toString();
      const response = await client.fetch(new Request(url, { headers: client.authHeaders('GET') }));
      if (!response.ok || !response.body) throw await apiError('GET', url, response);
      const target = resolve(options.output ?? (local ? basename(file!).replace(/\.enc$/, '') : basename(file!)));
      const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream);
      try {
        if (local) await pipeline(body, createAgeDecryptStream(local.identity), createWriteStream(target, { mode: 0o600 }));
        else await pipeline(body, createWriteStream(target, { mode: 0o600 }));
      } catch (error) {
        // A wrong key or a damaged file leaves no half-decrypted output behind.
        if (local) await rm(target, { force: true });
        throw error;
      }
      if (options.json) return printJson(output, { file: file, savedTo: target });
      output.write(`${target}\n`);
    }),
  );

  withJson(
    backups
      .command('restore')
      .description('restore a backup; with --wait, follow it and exit with its final status')
      .argument('<storageId>', 'destination id')
      .argument('<file>', 'path of the backup within the destination')
      .option('--target-source <id>', 'source configuration to restore into (default: the one that made the backup)')
      .option('--target-path <dir>', 'directory backups: extract below this absolute folder')
      .option('--original-paths', 'directory backups: put every file back where it came from (overwrites; needs --overwrite)')
      .option('--keep-special-modes', 'directory and volume backups: restore setuid/setgid/sticky bits with the owners (server runs as root)')
      .option('--database <name>', 'target database of a single-database dump (default: its original name)')
      .option('--overwrite', 'replace an existing target database, or write into a non-empty folder or the original paths (without it the server refuses with 409)')
      .option('--identity <keyfile>', 'a backup of a public-key profile: the age key file, sent with this restore only (the server keeps it in memory until the run starts)')
      .option('--wait', 'follow the restore until it ends'),
    ['holdfast backups restore 7b0d... files/2026-11-24.tar.gz --target-path /srv/restore --wait'],
  ).action(
    remote<{ json?: boolean; targetSource?: string; targetPath?: string; originalPaths?: boolean; keepSpecialModes?: boolean; database?: string; overwrite?: boolean; identity?: string; wait?: boolean }>(
      output,
      async ({ client, options }, storageId, file) => {
        const key = options.identity ? await readIdentityFile(options.identity) : undefined;
        const body = {
          file: file!,
          ...(options.targetSource ? { targetSourceId: options.targetSource } : {}),
          ...(options.targetPath ? { targetPath: options.targetPath } : {}),
          ...(options.originalPaths ? { restoreToOriginalPaths: true } : {}),
          ...(options.keepSpecialModes ? { keepSpecialModes: true } : {}),
          ...(options.database ? { database: options.database } : {}),
          ...(options.overwrite ? { overwrite: true } : {}),
          ...(key ? { privateKey: key.text } : {}),
        };
        const queued = await client.unwrap(client.api.POST('/api/storage/{id}/restore', { params: { path: { id: storageId! } }, body }));
        if (!options.wait) return options.json ? printJson(output, queued) : output.write(`${queued.executionId}\n`);
        const final = await followRun(client, queued.executionId);
        if (options.json) printJson(output, final);
        else output.write(`${final.id} ${final.status}\n`);
        return exitCodeOfStatus(final.status);
      },
    ),
  );
}
