/**
 * FAKE of Azure's version-level immutability, for tests only. Azurite (3.35) does not implement it: Set Blob
 * Immutability Policy and Set Blob Legal Hold answer 501 APINotImplemented (Azure/Azurite issue #2648). This HTTP
 * proxy stands in front of Azurite and implements what Microsoft's REST reference documents, for the containers
 * listed in `immutableContainers`:
 *   PUT    <blob>?comp=immutabilityPolicies  x-ms-immutability-policy-until-date (RFC 1123), x-ms-immutability-policy-mode
 *   DELETE <blob>?comp=immutabilityPolicies  (an Unlocked policy only; a Locked one cannot be removed)
 *   PUT    <blob>?comp=legalhold             x-ms-legal-hold: true|false
 * echoes policy and hold as headers of Get Blob / Get Blob Properties, sends
 * x-ms-immutable-storage-with-versioning-enabled: true on Get Container Properties, and refuses Delete Blob of a blob
 * under an unexpired policy or a legal hold with 409 BlobImmutableDueToPolicy / BlobImmutableDueToLegalHold.
 * Not modelled: blob versions. On Azure an overwrite (Put Blob, Put Block List) of a protected blob succeeds and keeps
 * the old content as a protected previous version, and deleting an unprotected current version keeps it as a previous
 * version; Azurite keeps no versions, so the fake answers 501 FakeNotModelled to an overwrite of a protected blob
 * rather than pretend. Everything else (and every request on other containers) goes to Azurite unchanged, so
 * Azurite still checks the Shared Key signature of those. The fake's own operations do not check signatures, and the
 * error code it answers for a policy on a container without immutability is its own choice (not verified against Azure).
 */
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AzuriteState } from './server.js';
import { serviceOf } from './server.js';

export interface BlobImmutability {
  until?: Date;
  mode?: 'Unlocked' | 'Locked';
  legalHold: boolean;
}

export interface ImmutabilityFake {
  /** Blob endpoint to configure instead of Azurite's (same account). */
  blobEndpoint: string;
  /** Containers that behave as if created with version-level immutability support. */
  immutableContainers: Set<string>;
  /** State per "container/blob name". */
  blobs: Map<string, BlobImmutability>;
  /** Requests the fake answered itself or refused, for assertions ("PUT immutabilityPolicies c/b"...). */
  handled: string[];
  close(): Promise<void>;
}

function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${message}\nRequestId:fake\nTime:${new Date().toISOString()}</Message></Error>`;
  response.writeHead(status, { 'content-type': 'application/xml', 'x-ms-error-code': code, 'x-ms-request-id': 'fake', 'x-ms-version': '2025-01-05' });
  response.end(body);
}

function sendOk(response: ServerResponse, headers: Record<string, string>): void {
  response.writeHead(200, { 'x-ms-request-id': 'fake', 'x-ms-version': '2025-01-05', date: new Date().toUTCString(), 'content-length': '0', ...headers });
  response.end();
}

function isLocked(state: BlobImmutability | undefined): 'policy' | 'hold' | undefined {
  if (state?.legalHold) return 'hold';
  if (state?.until && state.until.getTime() > Date.now()) return 'policy';
  return undefined;
}

function refuseLocked(response: ServerResponse, why: 'policy' | 'hold'): void {
  if (why === 'hold') sendError(response, 409, 'BlobImmutableDueToLegalHold', 'This operation is not permitted as the blob is immutable due to a legal hold.');
  else sendError(response, 409, 'BlobImmutableDueToPolicy', 'This operation is not permitted as the blob is immutable due to a policy.');
}

/** Starts the fake on a random port of 127.0.0.1. */
export async function startImmutabilityFake(azurite: AzuriteState): Promise<ImmutabilityFake> {
  const immutableContainers = new Set<string>();
  const blobs = new Map<string, BlobImmutability>();
  const handled: string[] = [];
  const service = serviceOf(azurite);

  const forward = (incoming: IncomingMessage, response: ServerResponse, extraHeaders: () => Record<string, string> = () => ({}), onStatus?: (status: number) => void) => {
    const upstream = httpRequest(
      { host: azurite.host, port: azurite.port, method: incoming.method, path: incoming.url, headers: { ...incoming.headers, host: `${azurite.host}:${azurite.port}` } },
      (answer) => {
        onStatus?.(answer.statusCode ?? 0);
        const isOk = (answer.statusCode ?? 500) < 300;
        response.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...(isOk ? extraHeaders() : {}) });
        answer.pipe(response);
      },
    );
    upstream.on('error', (error) => {
      if (!response.headersSent) sendError(response, 502, 'FakeProxyError', error.message);
      else response.destroy(error);
    });
    incoming.pipe(upstream);
  };

  const server = createServer((incoming, response) => {
    const url = new URL(incoming.url ?? '/', 'http://fake');
    const [, , container = '', ...rest] = url.pathname.split('/');
    const blobName = rest.map(decodeURIComponent).join('/');
    const comp = url.searchParams.get('comp');
    const method = incoming.method ?? 'GET';
    const isImmutable = immutableContainers.has(container);
    const id = `${container}/${blobName}`;

    const isImmutabilityCall = comp === 'immutabilitypolicies' || comp === 'immutabilityPolicies' || comp === 'legalhold';
    if (!isImmutable && blobName && isImmutabilityCall) {
      // Azure refuses these on a container without version-level immutability (the code here is the fake's choice).
      incoming.resume();
      handled.push(`refused ${method} ${comp} ${container}/${blobName} (container not immutable)`);
      return sendError(response, 409, 'ImmutableStorageWithVersioningNotEnabled', 'Version-level immutability is not enabled on this container.');
    }
    if (!isImmutable) return forward(incoming, response);
    if (!blobName) {
      // Get Container Properties: the header version-level immutability adds.
      if (url.searchParams.get('restype') === 'container' && !comp && (method === 'GET' || method === 'HEAD')) {
        return forward(incoming, response, () => ({ 'x-ms-immutable-storage-with-versioning-enabled': 'true' }));
      }
      return forward(incoming, response);
    }
    const state = blobs.get(id);
    if (isImmutabilityCall) {
      incoming.resume();
      void (async () => {
        const exists = await service.getContainerClient(container).getBlobClient(blobName).exists();
        if (!exists) return sendError(response, 404, 'BlobNotFound', 'The specified blob does not exist.');
        handled.push(`${method} ${comp} ${id}`);
        const current = blobs.get(id) ?? { legalHold: false };
        if (comp === 'legalhold' && method === 'PUT') {
          current.legalHold = String(incoming.headers['x-ms-legal-hold']).toLowerCase() === 'true';
          blobs.set(id, current);
          return sendOk(response, { 'x-ms-legal-hold': String(current.legalHold) });
        }
        if (method === 'PUT') {
          const until = new Date(String(incoming.headers['x-ms-immutability-policy-until-date'] ?? ''));
          const mode = String(incoming.headers['x-ms-immutability-policy-mode'] ?? 'Unlocked');
          if (Number.isNaN(until.getTime()) || (mode !== 'Unlocked' && mode !== 'Locked')) return sendError(response, 400, 'InvalidHeaderValue', 'The value for one of the HTTP headers is not in the correct format.');
          // A Locked policy can only be extended.
          if (current.mode === 'Locked' && current.until && (until < current.until || mode !== 'Locked')) return sendError(response, 409, 'ImmutabilityPolicyLocked', 'A locked immutability policy can only be extended.');
          Object.assign(current, { until, mode });
          blobs.set(id, current);
          return sendOk(response, { 'x-ms-immutability-policy-until-date': until.toUTCString(), 'x-ms-immutability-policy-mode': mode });
        }
        if (method === 'DELETE') {
          if (current.mode === 'Locked') return sendError(response, 409, 'ImmutabilityPolicyLocked', 'A locked immutability policy cannot be deleted.');
          blobs.set(id, { legalHold: current.legalHold });
          return sendOk(response, {});
        }
        return sendError(response, 405, 'UnsupportedHttpVerb', 'The resource does not support the specified HTTP verb.');
      })().catch((error: Error) => sendError(response, 500, 'FakeError', error.message));
      return;
    }
    const refusal = isLocked(state);
    if (method === 'DELETE' && !comp && refusal) {
      handled.push(`refused DELETE blob ${id}`);
      incoming.resume();
      return refuseLocked(response, refusal);
    }
    if (method === 'PUT' && (!comp || comp === 'blocklist') && refusal) {
      handled.push(`not modelled: overwrite of ${id}`);
      incoming.resume();
      return sendError(response, 501, 'FakeNotModelled', 'Azure would keep the protected content as a previous version; this fake keeps no versions.');
    }
    if (method === 'DELETE' && !comp) return forward(incoming, response, undefined, (status) => status < 300 && blobs.delete(id));
    if ((method === 'GET' || method === 'HEAD') && (!comp || comp === 'metadata')) {
      return forward(incoming, response, () => {
        const now = blobs.get(id);
        if (!now) return {};
        return {
          ...(now.until ? { 'x-ms-immutability-policy-until-date': now.until.toUTCString(), 'x-ms-immutability-policy-mode': now.mode ?? 'Unlocked' } : {}),
          'x-ms-legal-hold': String(now.legalHold),
        };
      });
    }
    return forward(incoming, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    blobEndpoint: `http://127.0.0.1:${port}/${azurite.accountName}`,
    immutableContainers,
    blobs,
    handled,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
