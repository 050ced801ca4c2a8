import { randomBytes } from 'node:crypto';

/** A database name reduced to characters safe in any file name on any OS (the name itself is quoted in SQL). */
export function fileSafe(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[.-]+/, '');
  return (safe || 'db').slice(0, 60);
}

/** A fresh, unguessable `.bak` name in the backup directory, so concurrent runs never share a file. */
export function backupFileName(purpose: 'backup' | 'restore', database: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `holdfast-${purpose}-${fileSafe(database)}-${stamp}-${randomBytes(6).toString('hex')}.bak`;
}
