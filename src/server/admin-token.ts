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
import { settingSpecs } from '../settings/spec.js';

/** Named in messages; the setting itself is read by src/settings/ (also from HCM_RUNNER_ADMIN_TOKEN_FILE). */
export const ADMIN_TOKEN_ENV = settingSpecs.adminToken.env;
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

/** Admin tokens carrying fewer bits than this are warned about, and refused under NODE_ENV=production. */
export const MIN_ADMIN_TOKEN_BITS = 128;
/** How to make a good one (named in every message about a weak token). */
export const GENERATE_TOKEN_HINT = 'generate one with `openssl rand -hex 32`';
/**
 * The characters of a bearer token (RFC 6750 b64token): hono's bearerAuth, which checks the admin
 * API's header, accepts no others, so a token with others could never be sent.
 */
const B64TOKEN = /^[A-Za-z0-9._~+/-]+=*$/;

/**
 * The most bits a token can carry, judged by its length and the smallest usual alphabet that
 * holds all of its characters (digits, hex, letters, base64 …). An upper bound — `aaaa…` of
 * length 28 passes — that catches what matters in practice: short tokens and passwords.
 */
export function tokenBits(token: string): number {
  const alphabets: Array<[RegExp, number]> = [
    [/^[0-9]*$/, 10],
    [/^[0-9a-f]*$/, 16],
    [/^[0-9A-F]*$/, 16],
    [/^[a-z]*$/, 26],
    [/^[A-Z]*$/, 26],
    [/^[a-z0-9]*$/, 36],
    [/^[A-Z0-9]*$/, 36],
    [/^[A-Za-z]*$/, 52],
    [/^[A-Za-z0-9]*$/, 62],
    [/^[A-Za-z0-9_-]*$/, 64],
    [/^[A-Za-z0-9+/=]*$/, 65],
  ];
  const size = alphabets.find(([re]) => re.test(token))?.[1] ?? 95;
  return Math.floor(token.length * Math.log2(size));
}

/**
 * Checks the admin token at start. A token the bearer header cannot carry is refused always; one
 * under 128 bits is warned about, and refused when NODE_ENV is `production`. `source` names
 * where it came from (the environment variable or the stored file).
 */
export function checkAdminToken(token: string, source: string, env: NodeJS.ProcessEnv, warn: (message: string) => void): void {
  if (!B64TOKEN.test(token)) {
    throw new Error(
      `the admin token in ${source} holds characters a bearer token cannot carry (only A-Z a-z 0-9 - . _ ~ + / and trailing =); ${GENERATE_TOKEN_HINT}`,
    );
  }
  const bits = tokenBits(token);
  if (bits >= MIN_ADMIN_TOKEN_BITS) return;
  const weak = `the admin token in ${source} is weak: at most ${bits} bits, at least ${MIN_ADMIN_TOKEN_BITS} are needed to resist guessing; ${GENERATE_TOKEN_HINT}`;
  if (env.NODE_ENV === 'production') throw new Error(`${weak} (refused because NODE_ENV=production)`);
  warn(`${weak} (NODE_ENV=production refuses to start with it)`);
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
