// Issue 41: a volume restore hands the Engine a rewritten tar; the rewriting applies the containment rule of every
// restore, so the Engine never sees a member below a symlink of the archive, a symlink that leads out of the volume
// (a relative chain of depth 2-6 included), a device node or FIFO, or a setuid/setgid bit it was not asked to keep.
// Symlinks come last. Checked on the rewritten tar itself and through the labelled fake of the Engine API.
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { auditRestoreTarget } from '@holdfast/testkit';
import { relativeToVolume } from '../src/internal/restore.js';
import { FakeDockerEngine } from './fake-docker.js';
import { volumeSource } from './helpers.js';

interface Member {
  name: string;
  type?: tar.Headers['type'];
  linkname?: string;
  mode?: number;
}

async function tarStream(members: Member[]): Promise<Readable> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const read = (async () => {
    for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
  })();
  for (const member of members) {
    const type = member.type ?? 'file';
    const header: tar.Headers = { name: member.name, type, mode: member.mode ?? 0o644 };
    if (member.linkname !== undefined) header.linkname = member.linkname;
    await new Promise<void>((resolve, reject) => pack.entry(header, type === 'file' ? 'x' : undefined, (error) => (error ? reject(error) : resolve())));
  }
  pack.finalize();
  await read;
  return Readable.from([Buffer.concat(chunks)]);
}

async function membersOf(stream: Readable): Promise<{ name: string; type: string; linkname?: string | null; mode?: number }[]> {
  const extract = tar.extract();
  const members: { name: string; type: string; linkname?: string | null; mode?: number }[] = [];
  const feeding = (async () => {
    for await (const chunk of stream) if (!extract.write(chunk as Buffer)) await new Promise((resolve) => extract.once('drain', resolve));
    extract.end();
  })().then(
    () => undefined,
    (error: unknown) => {
      extract.destroy(error as Error);
      return error;
    },
  );
  for await (const entry of extract) {
    members.push({ name: entry.header.name, type: String(entry.header.type), linkname: entry.header.linkname, mode: entry.header.mode });
    entry.resume();
  }
  const failure = await feeding;
  if (failure) throw failure;
  return members;
}

function chain(depth: number): Member[] {
  const links: Member[] = [{ name: 'volume/a/up', type: 'symlink', linkname: '..' }];
  for (let step = 2; step <= depth; step++) links.push({ name: `volume/a/up${step}`, type: 'symlink', linkname: `up${step === 2 ? '' : step - 1}/..` });
  return links;
}

describe('volume restore: the rewritten tar keeps to the volume (issue 41)', () => {
  for (const depth of [2, 3, 4, 5, 6]) {
    it(`leaves out a depth-${depth} symlink chain, what it would write through and links to it`, async () => {
      const warnings: string[] = [];
      const last = `a/up${depth}`;
      const rewritten = await membersOf(
        relativeToVolume(
          await tarStream([
            { name: 'volume/', type: 'directory' },
            { name: 'volume/a/', type: 'directory' },
            ...chain(depth),
            { name: `volume/${last}/evil/evil.txt` },
            { name: 'volume/hl3', type: 'link', linkname: `volume/${last}/outside-secret.txt` },
            { name: 'volume/fine.txt' },
          ]),
          { warnings },
        ),
      );
      expect(rewritten.map((member) => `${member.type} ${member.name}${member.linkname ? ` -> ${member.linkname}` : ''}`)).toEqual([
        'directory a',
        'file fine.txt',
        'symlink a/up -> ..',
      ]);
      const named = warnings.map((warning) => warning.slice(0, warning.indexOf(': ')));
      expect(named.sort()).toEqual([`volume/${last}/evil/evil.txt`, 'volume/hl3', ...chain(depth).slice(1).map((member) => member.name)].sort());
    });
  }

  it('drops devices, FIFOs and special bits (kept when asked), and still fails on names that leave the volume', async () => {
    const members: Member[] = [
      { name: 'volume/null', type: 'character-device' },
      { name: 'volume/pipe', type: 'fifo' },
      { name: 'volume/suid', mode: 0o4755 },
      { name: 'volume/tmp/', type: 'directory', mode: 0o1777 },
      { name: 'volume/abs', type: 'symlink', linkname: '/etc/shadow' },
    ];
    const warnings: string[] = [];
    const rewritten = await membersOf(relativeToVolume(await tarStream(members), { warnings }));
    expect(rewritten.map((member) => [member.name, member.mode])).toEqual([
      ['suid', 0o755],
      ['tmp', 0o777],
    ]);
    expect(warnings).toEqual([
      'volume/null: refused, device nodes are not restored',
      'volume/pipe: refused, FIFOs are not restored',
      'volume/suid: restored without its setuid bit',
      'volume/tmp/: restored without its sticky bit',
      'volume/abs: symlink refused, its target "/etc/shadow" is absolute, outside the restore target',
    ]);
    const kept = await membersOf(relativeToVolume(await tarStream(members.slice(2, 4)), { warnings: [], keepSpecialModes: true }));
    expect(kept.map((member) => member.mode)).toEqual([0o4755, 0o1777]);
    await expect(membersOf(relativeToVolume(await tarStream([{ name: '../../etc/evil' }])))).rejects.toThrow(/points outside the volume/);
  });

  // Podman's archive endpoint (4.x) roots a volume's members at `/` (seen in podman-engine.test.ts); Docker names
  // them after the mount point. Only an archive whose first member is `/` may hold absolute names.
  it('reads archives rooted at "/" as Podman writes them, and refuses absolute names in Docker-named archives', async () => {
    const rooted = await membersOf(relativeToVolume(await tarStream([
      { name: '/', type: 'directory' },
      { name: '/a.txt' },
      { name: '/sub/', type: 'directory' },
      { name: '/sub/hard.txt', type: 'link', linkname: '/a.txt' },
      { name: '/sub/soft', type: 'symlink', linkname: '../a.txt' },
    ])));
    expect(rooted.map((member) => [member.name, member.linkname ?? null])).toEqual([
      ['a.txt', null],
      ['sub', null],
      ['sub/hard.txt', 'a.txt'],
      ['sub/soft', '../a.txt'],
    ]);
    await expect(membersOf(relativeToVolume(await tarStream([{ name: 'volume/', type: 'directory' }, { name: '/etc/evil' }])))).rejects.toThrow(/"\/etc\/evil" points outside the volume/);
    await expect(membersOf(relativeToVolume(await tarStream([{ name: '/', type: 'directory' }, { name: 'volume/x' }])))).rejects.toThrow(/not below "\/"/);
  });

  it('names the refused members in the restore result, and the volume holds no link leading out', async () => {
    const fake = await FakeDockerEngine.start();
    try {
      const volume = await fake.addVolume('hostile_vol');
      const source = volumeSource({ dockerHost: `unix://${fake.socketPath}`, volume: 'hostile_vol', stopContainers: false });
      const result = await source.restore(await tarStream([{ name: 'volume/', type: 'directory' }, ...chain(3), { name: 'volume/a/up3/x/evil.txt' }, { name: 'volume/ok.txt' }]), {
        target: { database: 'hostile_vol' },
        signal: new AbortController().signal,
      });
      expect(result.warnings).toEqual([
        'volume/a/up3/x/evil.txt: refused, it lies below "a/up3", a symlink of this archive',
        'volume/a/up2: symlink refused, its target "up/.." resolves outside the restore target',
        'volume/a/up3: symlink refused, its target "up2/.." resolves outside the restore target',
      ]);
      expect(await auditRestoreTarget(volume)).toEqual({ linksLeadingOutside: [], hardLinksToOutside: [], specialModes: [], stagingLeftovers: [] });
    } finally {
      await fake.stop();
    }
  });
});
