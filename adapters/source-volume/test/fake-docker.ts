/**
 * A FAKE of the Docker Engine API (v1.43, https://docs.docker.com/engine/api/v1.43/), for tests only: no Docker
 * Engine can run on this machine. It serves exactly the endpoints the adapter uses, with their documented status
 * codes and JSON shapes, over a unix socket in a temp dir. Volumes are folders; the archive endpoints produce and
 * consume real tar streams. Every call is recorded so tests can assert what the adapter sent.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import { packFolder, writeEntry } from './fake-docker-tar.js';

export interface RecordedCall {
  method: string;
  /** Path without the `/v1.xx` prefix and without the query. */
  path: string;
  query: Record<string, string>;
  body?: unknown;
}

export interface FakeContainer {
  id: string;
  name: string;
  image: string;
  state: 'created' | 'running' | 'exited';
  labels: Record<string, string>;
  mounts: { volume: string; target: string; readOnly: boolean }[];
}

/** Failures the tests can inject into the next matching call. */
export interface Fault {
  method: string;
  pathPattern: RegExp;
  /** Answer with this status and message... */
  status?: number;
  /** ...or, for an archive download, send this many bytes and then cut the connection. */
  cutAfterBytes?: number;
}

export class FakeDockerEngine {
  readonly calls: RecordedCall[] = [];
  readonly volumes = new Map<string, string>();
  readonly containers = new Map<string, FakeContainer>();
  readonly images = new Set<string>(['alpine:3']);
  readonly faults: Fault[] = [];
  socketPath = '';
  /** With TLS: the TCP port on 127.0.0.1. */
  tcpPort = 0;
  private root = '';
  private server?: http.Server;

  /** Listens on a unix socket, or with `tls` on 127.0.0.1 over TLS requiring a client certificate (`--tlsverify`). */
  static async start(options: { tls?: { key: string; cert: string; ca: string } } = {}): Promise<FakeDockerEngine> {
    const fake = new FakeDockerEngine();
    fake.root = await mkdtemp(join(tmpdir(), 'holdfast-fake-docker-'));
    fake.socketPath = join(fake.root, 'docker.sock');
    const listener = (req: IncomingMessage, res: ServerResponse) => {
      fake.handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) fake.send(res, 500, { message: String(error) });
        else res.destroy();
      });
    };
    if (options.tls) {
      fake.server = https.createServer({ ...options.tls, requestCert: true, rejectUnauthorized: true }, listener);
      await new Promise<void>((resolve) => fake.server!.listen(0, '127.0.0.1', resolve));
      fake.tcpPort = (fake.server.address() as { port: number }).port;
    } else {
      fake.server = http.createServer(listener);
      await new Promise<void>((resolve) => fake.server!.listen(fake.socketPath, resolve));
    }
    return fake;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
    await rm(this.root, { recursive: true, force: true });
  }

  /** Creates a volume folder directly (test seeding, as `docker volume create` would). */
  async addVolume(name: string): Promise<string> {
    const dir = join(this.root, 'volumes', name);
    await mkdir(dir, { recursive: true });
    this.volumes.set(name, dir);
    return dir;
  }

  /** Adds a running container that mounts the volume (as `docker run -v name:/data` would). */
  addRunningContainer(name: string, volume: string): string {
    const id = randomBytes(32).toString('hex');
    this.containers.set(id, { id, name, image: 'app:1', state: 'running', labels: {}, mounts: [{ volume, target: '/data', readOnly: false }] });
    return id;
  }

  /** Helper containers (label io.holdfast.helper) that still exist. */
  helpers(): FakeContainer[] {
    return [...this.containers.values()].filter((container) => container.labels['io.holdfast.helper'] === 'true');
  }

  /** The recorded calls as `METHOD /path` lines, the shape tests compare. */
  sequence(): string[] {
    return this.calls.map((call) => `${call.method} ${call.path.replace(/[0-9a-f]{64}/g, '{id}')}`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://docker');
    const path = url.pathname.replace(/^\/v1\.\d+/, '');
    const query = Object.fromEntries(url.searchParams);
    const isTar = req.method === 'PUT';
    const body = isTar ? undefined : await readJson(req);
    const call: RecordedCall = { method: req.method ?? '', path, query, ...(body === undefined ? {} : { body }) };
    this.calls.push(call);
    const faultAt = this.faults.findIndex((fault) => fault.method === call.method && fault.pathPattern.test(path));
    const fault = faultAt >= 0 ? this.faults.splice(faultAt, 1)[0] : undefined;
    if (fault?.status) return this.send(res, fault.status, { message: `injected fault ${fault.status}` });
    const route = `${call.method} ${path.replace(/^\/(containers|volumes)\/(?!json$|create$)[^/]+/, '/$1/{x}')}`;
    const target = decodeURIComponent(path.split('/')[2] ?? '');
    switch (route) {
      case 'GET /version':
        return this.send(res, 200, { Version: '24.0.7-fake', ApiVersion: '1.43', MinAPIVersion: '1.12', Os: 'linux', Arch: 'amd64' });
      case 'GET /volumes':
        return this.send(res, 200, { Volumes: [...this.volumes.keys()].map((name) => this.volumeJson(name)), Warnings: null });
      case 'GET /volumes/{x}':
        return this.volumes.has(target) ? this.send(res, 200, this.volumeJson(target)) : this.send(res, 404, { message: `get ${target}: no such volume` });
      case 'POST /volumes/create': {
        const name = (body as { Name: string }).Name;
        if (!this.volumes.has(name)) await this.addVolume(name);
        return this.send(res, 201, this.volumeJson(name));
      }
      case 'POST /images/create':
        this.images.add(`${query.fromImage}:${query.tag ?? 'latest'}`);
        return this.send(res, 200, { status: `Status: Downloaded newer image for ${query.fromImage}:${query.tag}` });
      case 'POST /containers/create':
        return this.createContainer(res, body as CreateBody);
      case 'GET /containers/json':
        return this.listContainers(res, query);
    }
    const container = this.containers.get(target);
    if (route.startsWith(`${call.method} /containers/{x}`) && !container) return this.send(res, 404, { message: `No such container: ${target}` });
    switch (route) {
      case 'POST /containers/{x}/start':
        if (container!.state === 'running') return this.send(res, 304);
        container!.state = 'running';
        return this.send(res, 204);
      case 'POST /containers/{x}/stop':
        if (container!.state !== 'running') return this.send(res, 304);
        container!.state = 'exited';
        return this.send(res, 204);
      case 'DELETE /containers/{x}':
        if (container!.state === 'running' && query.force !== 'true') {
          return this.send(res, 409, { message: 'You cannot remove a running container. Stop the container before attempting removal or force remove' });
        }
        this.containers.delete(target);
        return this.send(res, 204);
      case 'GET /containers/{x}/archive':
        return this.getArchive(res, container!, query.path ?? '', fault);
      case 'PUT /containers/{x}/archive':
        return this.putArchive(req, res, container!, query.path ?? '');
    }
    return this.send(res, 404, { message: `page not found: ${call.method} ${path}` });
  }

  private volumeJson(name: string) {
    return { Name: name, Driver: 'local', Mountpoint: `/var/lib/docker/volumes/${name}/_data`, Labels: {}, Scope: 'local', Options: null };
  }

  private async createContainer(res: ServerResponse, body: CreateBody): Promise<void> {
    if (!this.images.has(body.Image)) return this.send(res, 404, { message: `No such image: ${body.Image}` });
    const mounts = [];
    for (const mount of body.HostConfig?.Mounts ?? []) {
      // Like Docker, mounting a named volume that does not exist creates it.
      if (!this.volumes.has(mount.Source)) await this.addVolume(mount.Source);
      mounts.push({ volume: mount.Source, target: mount.Target, readOnly: mount.ReadOnly === true });
    }
    const id = randomBytes(32).toString('hex');
    this.containers.set(id, { id, name: `/fake_${id.slice(0, 6)}`, image: body.Image, state: 'created', labels: body.Labels ?? {}, mounts });
    return this.send(res, 201, { Id: id, Warnings: [] });
  }

  private listContainers(res: ServerResponse, query: Record<string, string>): void {
    const filters = query.filters ? (JSON.parse(query.filters) as { volume?: string[] }) : {};
    const list = [...this.containers.values()]
      .filter((container) => query.all === 'true' || query.all === '1' || container.state === 'running')
      .filter((container) => !filters.volume || container.mounts.some((mount) => filters.volume!.includes(mount.volume)))
      .map((container) => ({ Id: container.id, Names: [container.name], Image: container.image, State: container.state, Labels: container.labels }));
    this.send(res, 200, list);
  }

  /** The folder behind a container path, when the path is (inside) a mount. */
  private resolveMount(container: FakeContainer, path: string): { dir: string; readOnly: boolean } | undefined {
    const mount = container.mounts.find((m) => path === m.target || path.startsWith(`${m.target}/`));
    if (!mount) return undefined;
    return { dir: join(this.volumes.get(mount.volume)!, path.slice(mount.target.length)), readOnly: mount.readOnly };
  }

  private async getArchive(res: ServerResponse, container: FakeContainer, path: string, fault?: Fault): Promise<void> {
    const resolved = this.resolveMount(container, posix.normalize(path));
    if (!resolved) return this.send(res, 404, { message: `Could not find the file ${path} in container ${container.name}` });
    const pack = tar.pack();
    const base = posix.basename(path);
    const stat = { name: base, size: 4096, mode: 0o20000000755, mtime: new Date().toISOString(), linkTarget: '' };
    res.writeHead(200, { 'content-type': 'application/x-tar', 'x-docker-container-path-stat': Buffer.from(JSON.stringify(stat)).toString('base64') });
    void packFolder(pack, resolved.dir, base).then(() => pack.finalize(), (error: unknown) => pack.destroy(error as Error));
    if (fault?.cutAfterBytes !== undefined) {
      let sent = 0;
      for await (const chunk of pack as AsyncIterable<Buffer>) {
        const room = fault.cutAfterBytes - sent;
        if (chunk.length >= room) {
          res.write(chunk.subarray(0, room));
          res.socket?.destroy();
          return;
        }
        sent += chunk.length;
        if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
      }
    }
    await pipeline(pack, res).catch(() => undefined);
  }

  private async putArchive(req: IncomingMessage, res: ServerResponse, container: FakeContainer, path: string): Promise<void> {
    const resolved = this.resolveMount(container, posix.normalize(path));
    if (!resolved) return this.send(res, 404, { message: `Could not find the file ${path} in container ${container.name}` });
    if (resolved.readOnly) return this.send(res, 403, { message: 'container rootfs is marked read-only' });
    const extract = tar.extract();
    extract.on('entry', (header, stream, next) => {
      writeEntry(resolved.dir, header, stream).then(() => next(), (error: unknown) => next(error as Error));
    });
    try {
      await pipeline(req, extract);
    } catch (error) {
      return this.send(res, 400, { message: `extracting the archive failed: ${(error as Error).message}` });
    }
    this.send(res, 200);
  }

  private send(res: ServerResponse, status: number, body?: unknown): void {
    if (body === undefined) {
      res.writeHead(status).end();
      return;
    }
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  }
}

interface CreateBody {
  Image: string;
  Labels?: Record<string, string>;
  HostConfig?: { Mounts?: { Type: string; Source: string; Target: string; ReadOnly?: boolean }[] };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as unknown) : undefined;
}
