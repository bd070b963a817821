/**
 * Console sign-in: the admin token, typed once, becomes a session cookie.
 *
 * The cookie never holds the token: it is `v2.<expires>.<id>.<mac>`, an HMAC keyed by a hash of
 * the admin token, so changing the token signs everybody out, and a forged or expired cookie is
 * refused without touching the store. The session itself lives in the store
 * (`console_sessions`): signing out deletes it there, `DELETE /api/console-sessions` deletes them
 * all, and either holds after a restart and on every replica.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { adminTokenMatcher } from '../server/admin-token.js';
import type { Store } from '../store/types.js';
import { settingSpecs } from '../settings/spec.js';

export const SESSION_COOKIE = 'hcm_console';
/** How long a console session lasts after signing in, unless HCM_RUNNER_CONSOLE_SESSION_SECONDS says otherwise. */
export const DEFAULT_SESSION_SECONDS = settingSpecs.consoleSessionSeconds.default;

export class ConsoleSessions {
  private readonly key: Buffer;
  /** Constant-time comparison with the admin token. */
  readonly tokenMatches: (candidate: string) => boolean;

  constructor(
    adminToken: string,
    private readonly store: Store,
    private readonly ttlMs = DEFAULT_SESSION_SECONDS * 1000,
  ) {
    this.tokenMatches = adminTokenMatcher(adminToken);
    this.key = sha256(`hcm-runner console session\n${adminToken}`);
  }

  async signIn(c: Context): Promise<void> {
    const expires = Date.now() + this.ttlMs;
    const id = randomBytes(16).toString('base64url');
    await this.store.addConsoleSession(id, new Date(expires).toISOString());
    const body = `v2.${expires}.${id}`;
    setCookie(c, SESSION_COOKIE, `${body}.${this.mac(body)}`, {
      path: '/console',
      httpOnly: true,
      sameSite: 'Strict',
      secure: isHttps(c),
      expires: new Date(expires),
    });
  }

  async signOut(c: Context): Promise<void> {
    const session = this.parse(getCookie(c, SESSION_COOKIE));
    if (session) await this.store.deleteConsoleSession(session.id);
    deleteCookie(c, SESSION_COOKIE, { path: '/console', httpOnly: true, sameSite: 'Strict', secure: isHttps(c) });
  }

  async isSignedIn(c: Context): Promise<boolean> {
    const session = this.parse(getCookie(c, SESSION_COOKIE));
    return session !== undefined && (await this.store.hasConsoleSession(session.id));
  }

  /** The cookie's session id when its MAC is right and it has not expired. */
  private parse(value: string | undefined): { id: string } | undefined {
    const m = /^(v2\.(\d{1,15})\.([A-Za-z0-9_-]{1,64}))\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
    if (!m) return undefined;
    const expected = Buffer.from(this.mac(m[1]!));
    const given = Buffer.from(m[4]!);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    if (Number(m[2]) <= Date.now()) return undefined;
    return { id: m[3]! };
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

/**
 * The origins the console's own pages are served from: the request's, the public URL's, and the
 * one the Host header names (behind a proxy that keeps it). What hono's `csrf` compares `Origin`
 * with when a browser sends no `Sec-Fetch-Site`.
 */
export function ownOrigins(c: Context, publicUrl: string): Set<string> {
  const own = new Set([new URL(c.req.url).origin, originOf(publicUrl)]);
  const host = c.req.header('host');
  if (host) own.add(`${isHttps(c) ? 'https' : 'http'}://${host}`);
  return own;
}

function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:' || c.req.header('x-forwarded-proto') === 'https';
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
