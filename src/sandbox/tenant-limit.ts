/**
 * The tenant's rate limit, as the HCM service enforces one (docs/hcm-service.md): API requests
 * (the token endpoint excluded) beyond `requestsPerSecond` in any sliding second, or beyond
 * `maxConcurrent` in flight, are answered 429 with `Retry-After`. Off until set (options,
 * `PUT /__sandbox/rate-limit`, `hcm-runner sandbox --rate-limit N --max-concurrent M`). It also
 * counts what it saw — peak requests in a second, peak in flight, how many it refused — so a test
 * can show that a client kept within the limit. `latencyMs` holds each accepted request that long,
 * so requests overlap as they would against a real service.
 */
import type { MiddlewareHandler } from 'hono';
import type { SandboxEnv } from './http.js';

export interface TenantLimitSettings {
  /** Accepted API requests in any sliding second; more → 429. */
  requestsPerSecond?: number;
  /** API requests in flight at once; more → 429. */
  maxConcurrent?: number;
  /** The Retry-After of a 429, in seconds (default 1). */
  retryAfter?: number;
  /** Each accepted request is answered this much later (default 0). */
  latencyMs?: number;
}

export interface TenantLimitStats {
  /** API requests answered normally. */
  accepted: number;
  /** API requests answered 429 by this limit. */
  refused: number;
  /** Most API requests (accepted or not) that arrived within one sliding second. */
  peakPerSecond: number;
  /** Most API requests in flight at once. */
  peakConcurrent: number;
}

const WINDOW_MS = 1000;
/** Arrival times kept for the peak count: a flood is counted up to this, never stored whole. */
const MAX_ARRIVALS = 100_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The settings' numbers as given, or an error message naming the first bad one. */
export function checkTenantLimit(raw: unknown): TenantLimitSettings | string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    return 'body must be a JSON object {requestsPerSecond, maxConcurrent, retryAfter, latencyMs}';
  const out: TenantLimitSettings = {};
  for (const [key, v] of Object.entries(raw as Record<string, unknown>)) {
    if (!['requestsPerSecond', 'maxConcurrent', 'retryAfter', 'latencyMs'].includes(key)) return `unknown setting ${key}`;
    if (v === null || v === undefined) continue;
    const min = key === 'requestsPerSecond' || key === 'maxConcurrent' ? 1 : 0;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > 1_000_000) return `${key} must be an integer ≥ ${min}`;
    out[key as keyof TenantLimitSettings] = v;
  }
  return out;
}

export class TenantLimit {
  settings: TenantLimitSettings = {};
  #accepted: number[] = [];
  #arrivals: number[] = [];
  #inFlight = 0;
  #stats: TenantLimitStats = { accepted: 0, refused: 0, peakPerSecond: 0, peakConcurrent: 0 };

  /** New settings; the counts start again. */
  set(settings: TenantLimitSettings): void {
    this.settings = { ...settings };
    this.#accepted = [];
    this.#arrivals = [];
    this.#stats = { accepted: 0, refused: 0, peakPerSecond: 0, peakConcurrent: 0 };
  }

  get on(): boolean {
    const s = this.settings;
    return s.requestsPerSecond !== undefined || s.maxConcurrent !== undefined || !!s.latencyMs;
  }

  stats(): TenantLimitStats {
    return { ...this.#stats };
  }

  /** An API request arrives: true when it is accepted (then `done` when it is answered). */
  admit(now = performance.now()): boolean {
    const since = now - WINDOW_MS;
    while (this.#arrivals.length && this.#arrivals[0]! <= since) this.#arrivals.shift();
    while (this.#accepted.length && this.#accepted[0]! <= since) this.#accepted.shift();
    if (this.#arrivals.length < MAX_ARRIVALS) this.#arrivals.push(now);
    this.#stats.peakPerSecond = Math.max(this.#stats.peakPerSecond, this.#arrivals.length);
    const { requestsPerSecond: rate, maxConcurrent: max } = this.settings;
    if ((rate !== undefined && this.#accepted.length >= rate) || (max !== undefined && this.#inFlight >= max)) {
      this.#stats.refused++;
      return false;
    }
    if (rate !== undefined) this.#accepted.push(now);
    this.#stats.accepted++;
    this.#inFlight++;
    this.#stats.peakConcurrent = Math.max(this.#stats.peakConcurrent, this.#inFlight);
    return true;
  }

  done(): void {
    this.#inFlight--;
  }
}

/** Applies the limit to the API routes (`/ccx/…`, not the token endpoint nor `/__sandbox`). */
export function tenantLimitMiddleware(limit: TenantLimit): MiddlewareHandler<SandboxEnv> {
  return async (c, next) => {
    if (!limit.on || !c.req.path.startsWith('/ccx/') || c.req.path.startsWith('/ccx/oauth2/')) return next();
    if (!limit.admit()) {
      const retryAfter = String(limit.settings.retryAfter ?? 1);
      return c.json({ error: 'rate limit exceeded' }, 429, { 'retry-after': retryAfter });
    }
    try {
      if (limit.settings.latencyMs) await sleep(limit.settings.latencyMs);
      await next();
    } finally {
      limit.done();
    }
  };
}
