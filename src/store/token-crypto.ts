/**
 * Encryption at rest for OAuth tokens: AES-256-GCM with a random 12-byte IV, in the versioned
 * string format `v1:<iv b64url>:<tag b64url>:<ciphertext b64url>`.
 *
 * The key is derived with scrypt from HCM_RUNNER_SECRET. When HCM_RUNNER_SECRET is unset, a random
 * 32-byte secret is generated once into `<dataDir>/secret.key` (mode 0600) and used instead, so a
 * single-node install works out of the box; replicas sharing a database must set HCM_RUNNER_SECRET
 * (or share that file), otherwise they cannot read each other's tokens.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { settingSpecs } from '../settings/spec.js';

const VERSION = 'v1';
const SALT = 'hcm-runner/token-store/v1';
/** Named in messages; the setting itself is read by src/settings/ (also from HCM_RUNNER_SECRET_FILE). */
export const SECRET_ENV = settingSpecs.secret.env;
export const SECRET_FILE = 'secret.key';

export function deriveKey(secret: string | Buffer): Buffer {
  if (!secret || secret.length === 0) throw new Error(`${SECRET_ENV} is empty: set it to a long random value to encrypt stored tokens`);
  return scryptSync(secret, SALT, 32, { N: 16384, r: 8, p: 1 });
}

export function encryptString(plain: string, key: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(VERSION));
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join(':');
}

export function decryptString(blob: string, key: Buffer): string {
  const [version, iv, tag, ct] = blob.split(':');
  if (version !== VERSION || !iv || !tag || ct === undefined) throw new Error('stored token blob has an unknown format');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(VERSION));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error(`stored tokens cannot be decrypted: ${SECRET_ENV} (or ${SECRET_FILE}) differs from the one they were written with`);
  }
}

/** The token key: from `secret` (the HCM_RUNNER_SECRET setting), else from (a newly created) `<dataDir>/secret.key`. */
export async function loadTokenKey(dataDir: string, secret?: string): Promise<Buffer> {
  if (secret) return deriveKey(secret);
  const file = join(dataDir, SECRET_FILE);
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  try {
    await fs.writeFile(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const text = (await fs.readFile(file, 'utf8')).trim();
  if (!text) throw new Error(`${file} is empty: delete it (stored tokens become unreadable) or set ${SECRET_ENV}`);
  return deriveKey(text);
}

export class TokenCipher {
  constructor(private readonly key: Buffer) {}
  encrypt(value: unknown): string {
    return encryptString(JSON.stringify(value), this.key);
  }
  decrypt<T = unknown>(blob: string): T {
    return JSON.parse(decryptString(blob, this.key)) as T;
  }
}
