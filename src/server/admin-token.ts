/**
 * The admin API's bearer token when HCM_RUNNER_ADMIN_TOKEN is not set: created once, at random,
 * into `<dataDir>/admin-token` (mode 0600) and reused on every later start, so the CLI client
 * commands and a browser session keep working across restarts. The CLI reads the same file
 * (`readStoredAdminToken`), which is why both sides share this module.
 *
 * With PostgreSQL the file still lives in the data directory of the process that serves: replicas
 * each have their own unless they share the directory — set HCM_RUNNER_ADMIN_TOKEN there.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { join, resolve } from 'node:path';

export const ADMIN_TOKEN_ENV = 'HCM_RUNNER_ADMIN_TOKEN';
export const ADMIN_TOKEN_FILE = 'admin-token';

export function adminTokenPath(dataDir: string): string {
  return resolve(join(dataDir, ADMIN_TOKEN_FILE));
}

/** The token stored in `dataDir`, or undefined when there is none (never creates one). */
export async function readStoredAdminToken(dataDir: string): Promise<string | undefined> {
  let text: string;
  try {
    text = await fs.readFile(adminTokenPath(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw new Error(`cannot read the admin token at ${adminTokenPath(dataDir)}: ${(err as Error).message}`);
  }
  return text.trim() || undefined;
}

/**
 * The stored token, created first when there is none. `created` tells the banner to print it.
 * Two processes starting at once agree: the file is written exclusively and read back.
 */
export async function loadOrCreateAdminToken(dataDir: string): Promise<{ token: string; file: string; created: boolean }> {
  const file = adminTokenPath(dataDir);
  let created = false;
  try {
    await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
    await fs.writeFile(file, `${randomBytes(24).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new Error(`cannot store the admin token at ${file}: ${(err as Error).message} (set ${ADMIN_TOKEN_ENV} instead)`);
    }
  }
  const token = await readStoredAdminToken(dataDir);
  if (!token) throw new Error(`${file} is empty: delete it (a new token is then created) or set ${ADMIN_TOKEN_ENV}`);
  return { token, file, created };
}

/**
 * Whether a presented token is the admin token, in constant time (both sides hashed first, so
 * neither the content nor the length leaks). The one check for the admin API's bearer token and
 * the console's sign-in form.
 */
export function adminTokenMatcher(adminToken: string): (candidate: string) => boolean {
  const expected = sha256(adminToken);
  return (candidate) => timingSafeEqual(sha256(candidate), expected);
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
