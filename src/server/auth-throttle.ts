/**
 * Failed authentication, slowed per client: the console's sign-in and the admin API's bearer
 * check share one table of client addresses. After `maxFailures` wrong tokens in a row a client
 * is refused with 429 + Retry-After for 1 s, and every further failure doubles that, up to
 * `maxLockoutMs` — so guessing costs an attacker time, while an operator who shares the
 * attacker's address (a NAT, a proxy) is never kept out for longer than the cap. While a client
 * is locked out its tokens are not even compared: a right token then also waits, or a 429 vs 401
 * would tell a guesser which token was right.
 *
 * Bounded: at most `maxClients` addresses are remembered (the least recently failing are
 * forgotten first), an IPv6 client counts per /64 (one host usually has a whole /64), and a
 * client's failures are forgotten after `FAILURE_MEMORY_MS` without one, or at its first success.
 *
 * Logged per burst, not per failure: one line at a burst's first failure and one when it is
 * first locked out. Counted in `hcm_runner_auth_failures_total{surface, reason}`.
 */
import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import { HttpError } from '../common/errors.js';
import type { AppEnv } from './types.js';
import { settingSpecs } from '../settings/spec.js';

/** Where a token was presented: the console's sign-in form or the admin API's bearer header. */
export type AuthSurface = 'sign-in' | 'admin-api';

export const DEFAULT_AUTH_MAX_FAILURES = settingSpecs.authMaxFailures.default;
export const DEFAULT_AUTH_MAX_LOCKOUT_SECONDS = settingSpecs.authMaxLockoutSeconds.default;
/** A client quiet (no failure) for this long starts afresh. */
export const FAILURE_MEMORY_MS = 15 * 60 * 1000;
/** Addresses remembered at most (~100 bytes each). */
export const DEFAULT_MAX_CLIENTS = 10_000;
const FIRST_LOCKOUT_MS = 1000;

export interface AuthThrottleOptions {
  /** Wrong tokens in a row before the first lockout (HCM_RUNNER_AUTH_MAX_FAILURES). */
  maxFailures: number;
  /** The longest lockout (HCM_RUNNER_AUTH_MAX_LOCKOUT_SECONDS × 1000). */
  maxLockoutMs: number;
  logger?: Logger;
  /** Counts failures by surface and reason (`wrong_token`, `locked_out`). */
  counter?: Counter<'surface' | 'reason'>;
  maxClients?: number;
}

interface ClientFailures {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
  /** Whether this burst's lockout was logged already. */
  lockoutLogged: boolean;
}

export class AuthThrottle {
  private readonly clients = new Map<string, ClientFailures>();
  private readonly maxClients: number;

  constructor(private readonly opts: AuthThrottleOptions) {
    this.maxClients = opts.maxClients ?? DEFAULT_MAX_CLIENTS;
  }

  /** Addresses remembered now (for tests of the bound). */
  get size(): number {
    return this.clients.size;
  }

  /** Throws 429 with Retry-After while `client` is locked out; call before comparing its token. */
  assertNotLocked(client: string, surface: AuthSurface): void {
    const state = this.current(client);
    const wait = state ? state.lockedUntil - Date.now() : 0;
    if (wait <= 0) return;
    this.opts.counter?.inc({ surface, reason: 'locked_out' });
    const seconds = Math.ceil(wait / 1000);
    throw new HttpError(429, `too many wrong admin tokens from this address; try again in ${seconds} s`, { 'retry-after': String(seconds) });
  }

  /** A wrong token from `client`: counted, logged once per burst, and locked out past the limit. */
  failed(client: string, surface: AuthSurface): void {
    const now = Date.now();
    let state = this.current(client);
    if (state)
      this.clients.delete(client); // re-inserted below: the Map's order is recency
    else {
      state = { failures: 0, lastFailure: now, lockedUntil: 0, lockoutLogged: false };
      this.opts.logger?.warn(
        { client, surface },
        'authentication failed: wrong admin token (further failures of this burst are counted, not logged)',
      );
    }
    state.failures++;
    state.lastFailure = now;
    this.opts.counter?.inc({ surface, reason: 'wrong_token' });
    const over = state.failures - this.opts.maxFailures;
    if (over >= 0) {
      const lockoutMs = Math.min(this.opts.maxLockoutMs, FIRST_LOCKOUT_MS * 2 ** Math.min(over, 30));
      state.lockedUntil = now + lockoutMs;
      if (!state.lockoutLogged) {
        state.lockoutLogged = true;
        this.opts.logger?.warn(
          { client, surface, failures: state.failures, lockoutSeconds: Math.ceil(lockoutMs / 1000) },
          'authentication failures: client locked out (each further failure doubles the lockout, up to the cap)',
        );
      }
    }
    this.clients.set(client, state);
    while (this.clients.size > this.maxClients) this.clients.delete(this.clients.keys().next().value!);
  }

  /** The right token from `client`: its failures are forgotten. */
  succeeded(client: string): void {
    this.clients.delete(client);
  }

  private current(client: string): ClientFailures | undefined {
    const state = this.clients.get(client);
    if (state && state.lockedUntil <= Date.now() && Date.now() - state.lastFailure > FAILURE_MEMORY_MS) {
      this.clients.delete(client);
      return undefined;
    }
    return state;
  }
}

/**
 * The address failures are counted under: the TCP peer (never a forwarded-for header, which the
 * caller chooses), IPv4-mapped IPv6 as IPv4, other IPv6 by its /64.
 */
export function clientKey(c: Context<AppEnv>): string {
  const address = (c.env?.incoming?.socket?.remoteAddress as string | undefined) ?? 'unknown';
  return addressKey(address);
}

export function addressKey(address: string): string {
  const plain = address.replace(/%.*$/, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  if (mapped) return mapped[1]!;
  if (!plain.includes(':')) return plain;
  const [head = '', tail] = plain.split('::', 2) as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
