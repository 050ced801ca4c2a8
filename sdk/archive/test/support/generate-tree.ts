import { chmod, chown, lchown, link, mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What {@link generateTree} created, for assertions. */
export interface GeneratedTree {
  files: number;
  longPath: string;
  unicodePath: string;
}

/**
 * Builds a deterministic tree: `fileCount` small files spread over nested directories with varied modes and mtimes,
 * a path over 100 bytes, unicode names, symlinks (relative, absolute, dangling), hard links and empty directories.
 */
export async function generateTree(root: string, fileCount: number): Promise<GeneratedTree> {
  await mkdir(root, { recursive: true });
  const modes = [0o644, 0o600, 0o755, 0o640, 0o444];
  for (let index = 0; index < fileCount; index += 1) {
    const dir = join(root, `d${index % 17}`, `sub${index % 5}`);
    await mkdir(dir, { recursive: true });
    const file = join(dir, `file-${index}.txt`);
    // Sizes vary from empty to a few blocks so padding and empty members are both covered.
    await writeFile(file, `content ${index}\n`.repeat(index % 97));
    await chmod(file, modes[index % modes.length] as number);
    await utimes(file, 1_600_000_000 + index, 1_600_000_000 + index + 0.25);
  }
  const longDir = join(root, 'long', 'a'.repeat(60), 'b'.repeat(60));
  await mkdir(longDir, { recursive: true });
  const longPath = join('long', 'a'.repeat(60), 'b'.repeat(60), `${'c'.repeat(80)}.bin`);
  await writeFile(join(root, longPath), Buffer.alloc(3000, 7));
  const unicodeDir = join(root, 'ünïcødé', '日本語');
  await mkdir(unicodeDir, { recursive: true });
  const unicodePath = join('ünïcødé', '日本語', 'ファイル名 😀.txt');
  await writeFile(join(root, unicodePath), 'こんにちは\n');
  await symlink('../d1/sub1/file-1.txt', join(root, 'ünïcødé', 'relative-link'));
  await symlink('/etc/hostname', join(root, 'absolute-link'));
  await symlink('does-not-exist', join(root, 'dangling-link'));
  await link(join(root, 'd2', 'sub2', 'file-2.txt'), join(root, 'hard-link-1'));
  await link(join(root, 'd2', 'sub2', 'file-2.txt'), join(root, 'ünïcødé', 'hard-link-2'));
  await mkdir(join(root, 'empty', 'nested-empty'), { recursive: true });
  await mkdir(join(root, 'private-empty'), { mode: 0o700 });
  await chmod(join(root, 'private-empty'), 0o700);
  await utimes(join(root, 'empty', 'nested-empty'), 1_500_000_000, 1_500_000_000);
  // Ownership other than the test runner's can only be set (and so only be checked) as root.
  if (process.getuid?.() === 0) {
    await chown(join(root, 'd3', 'sub3', 'file-3.txt'), 1234, 2345);
    await chown(join(root, 'private-empty'), 1234, 2345);
    await lchown(join(root, 'dangling-link'), 4321, 5432);
  }
  return { files: fileCount, longPath, unicodePath };
}
