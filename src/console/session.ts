/**
 * Console sign-in: the admin token, typed once, becomes a signed session cookie.
 *
 * The cookie never holds the token: it is `v1.<expires>.<nonce>.<mac>` with an HMAC keyed by a
 * hash of the admin token, so every replica that knows the token accepts it (no shared session
 * table) and changing the token signs everybody out. Sign out clears the cookie and remembers its
 * nonce as revoked in this process until it expires.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { adminTokenMatcher } from '../server/admin-token.js';

export const SESSION_COOKIE = 'hcm_console';
/** How long a console session lasts after signing in. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export class ConsoleSessions {
  private readonly key: Buffer;
  private readonly revoked = new Map<string, number>();
  /** Constant-time comparison with the admin token. */
  readonly tokenMatches: (candidate: string) => boolean;

  constructor(adminToken: string) {
    this.tokenMatches = adminTokenMatcher(adminToken);
    this.key = sha256(`hcm-runner console session\n${adminToken}`);
  }

  signIn(c: Context): void {
    const expires = Date.now() + SESSION_TTL_MS;
    const body = `v1.${expires}.${randomBytes(16).toString('base64url')}`;
    setCookie(c, SESSION_COOKIE, `${body}.${this.mac(body)}`, {
      path: '/console',
      httpOnly: true,
      sameSite: 'Strict',
      secure: isHttps(c),
      expires: new Date(expires),
    });
  }

  signOut(c: Context): void {
    const session = this.parse(getCookie(c, SESSION_COOKIE));
    if (session) this.revoked.set(session.nonce, session.expires);
    deleteCookie(c, SESSION_COOKIE, { path: '/console', httpOnly: true, sameSite: 'Strict', secure: isHttps(c) });
  }

  isSignedIn(c: Context): boolean {
    return this.parse(getCookie(c, SESSION_COOKIE)) !== undefined;
  }

  private parse(value: string | undefined): { expires: number; nonce: string } | undefined {
    const m = /^(v1\.(\d{1,15})\.([A-Za-z0-9_-]{1,64}))\.([A-Za-z0-9_-]{43})$/.exec(value ?? '');
    if (!m) return undefined;
    const expected = Buffer.from(this.mac(m[1]!));
    const given = Buffer.from(m[4]!);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const expires = Number(m[2]);
    const now = Date.now();
    if (expires <= now) return undefined;
    for (const [nonce, until] of this.revoked) if (until <= now) this.revoked.delete(nonce);
    if (this.revoked.has(m[3]!)) return undefined;
    return { expires, nonce: m[3]! };
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

/**
 * CSRF: a request that changes state must come from the console's own pages. Browsers send
 * `Sec-Fetch-Site` (and `Origin` on every POST); a request with neither is refused too, since a
 * signed-in browser always sends one of them.
 */
export function fromOwnOrigin(c: Context, publicUrl: string): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin';
  const origin = c.req.header('origin');
  if (!origin || origin === 'null') return false;
  const own = new Set([new URL(c.req.url).origin, originOf(publicUrl)]);
  const host = c.req.header('host');
  if (host) own.add(`${isHttps(c) ? 'https' : 'http'}://${host}`);
  return own.has(origin);
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
