import type { Readable } from 'node:stream';
import { createAdapterInstance } from '@holdfast/testkit';
import type { SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';

export function mongoSource(config: Record<string, unknown>): SourceAdapter {
  return createAdapterInstance<SourceAdapter>(definition, config);
}

export async function drain(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Commands that are not connection housekeeping (handshake, monitoring, pings, session ends). */
export const HOUSEKEEPING = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'endSessions']);
