import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { rawPublicKey } from '@holdfast/agents/protocol';

/** The agent's identity on disk: its Ed25519 key pair and, once enrolled, its id and server. */
export interface AgentIdentity {
  privateKey: KeyObject;
  /** Raw 32-byte public key, base64url (what the server stores). */
  publicKey: string;
  /** Set after enrollment. */
  agentId?: string;
  server?: string;
}

/** A state directory the agent refuses, with the reason (exit code 10). */
export class AgentStateError extends Error {
  override readonly name = 'AgentStateError';
}

const KEY_FILE = 'agent-key.pem';
const STATE_FILE = 'agent.json';

/**
 * Makes sure the state directory exists and is private: created 0700 when missing; an existing one that its group
 * or others can read, write or enter is refused (the private key would be readable by them), as is one owned by
 * another user.
 */
export async function privateStateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await stat(dir);
  if (!info.isDirectory()) throw new AgentStateError(`--state-dir ${dir} is not a directory`);
  if ((info.mode & 0o077) !== 0) {
    throw new AgentStateError(`--state-dir ${dir} is open to other users (mode ${(info.mode & 0o777).toString(8)}): run chmod 700 ${dir}`);
  }
  if (typeof process.getuid === 'function' && info.uid !== process.getuid()) {
    throw new AgentStateError(`--state-dir ${dir} belongs to another user (uid ${info.uid})`);
  }
}

/** Writes a file readable by its owner only, replacing it atomically (a crash never leaves half a key). */
export async function writePrivate(path: string, content: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  const handle = await open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

/** Loads the identity, generating the key pair on first start. */
export async function loadIdentity(dir: string): Promise<AgentIdentity> {
  await privateStateDir(dir);
  const keyPath = join(dir, KEY_FILE);
  let pem: string;
  try {
    const info = await stat(keyPath);
    if ((info.mode & 0o077) !== 0) throw new AgentStateError(`${keyPath} is readable by other users: run chmod 600 ${keyPath}`);
    pem = await readFile(keyPath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const { privateKey } = generateKeyPairSync('ed25519');
    pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    await writePrivate(keyPath, pem);
  }
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new AgentStateError(`${keyPath} does not hold an Ed25519 private key`);
  const identity: AgentIdentity = { privateKey, publicKey: rawPublicKey(createPublicKey(privateKey)) };
  try {
    const state = JSON.parse(await readFile(join(dir, STATE_FILE), 'utf8')) as { agentId?: unknown; server?: unknown };
    if (typeof state.agentId === 'string') identity.agentId = state.agentId;
    if (typeof state.server === 'string') identity.server = state.server;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new AgentStateError(`${join(dir, STATE_FILE)} cannot be read: ${(error as Error).message}`);
  }
  return identity;
}

/** Records the enrollment: from now on the agent authenticates with its key as this agent id. */
export async function saveEnrollment(dir: string, agentId: string, server: string): Promise<void> {
  await writePrivate(join(dir, STATE_FILE), `${JSON.stringify({ agentId, server, enrolledAt: new Date().toISOString() }, null, 2)}\n`);
}

/** Ed25519 signature (base64url) of `message`. */
export function signWith(identity: AgentIdentity, message: Buffer): string {
  return sign(null, message, identity.privateKey).toString('base64url');
}

