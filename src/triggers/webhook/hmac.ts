/**
 * HMAC verification over the raw request bytes (never a re-serialisation: senders sign what they
 * sent). Constant-time comparison of the decoded digests.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { HmacOptions } from '../../definition/types.js';

export interface HmacCheck {
  ok: boolean;
  /** Why it failed, safe to show the caller (never the expected value). */
  reason?: string;
}

export function verifyHmac(
  opts: Pick<HmacOptions, 'header' | 'algorithm' | 'encoding' | 'prefix'>,
  secret: string,
  rawBody: Buffer,
  headers: Record<string, string>,
): HmacCheck {
  const header = headers[opts.header.toLowerCase()];
  if (!header) return { ok: false, reason: `missing signature header ${opts.header}` };
  let sig = header.trim();
  if (opts.prefix) {
    if (!sig.toLowerCase().startsWith(opts.prefix.toLowerCase())) return { ok: false, reason: 'invalid signature' };
    sig = sig.slice(opts.prefix.length);
  }
  const expected = createHmac(opts.algorithm, secret).update(rawBody).digest();
  const given = decode(sig, opts.encoding);
  if (!given || given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid signature' };
  return { ok: true };
}

function decode(sig: string, encoding: 'hex' | 'base64'): Buffer | undefined {
  if (encoding === 'hex') return /^[0-9a-fA-F]*$/.test(sig) && sig.length % 2 === 0 ? Buffer.from(sig, 'hex') : undefined;
  // Accept base64url too: some senders use it for headers.
  return /^[A-Za-z0-9+/_-]*={0,2}$/.test(sig) ? Buffer.from(sig.replace(/-/g, '+').replace(/_/g, '/'), 'base64') : undefined;
}

/** Computes a signature the way a sender would (tests, the CLI). */
export function signHmac(opts: Pick<HmacOptions, 'algorithm' | 'encoding' | 'prefix'>, secret: string, body: Buffer | string): string {
  return opts.prefix + createHmac(opts.algorithm, secret).update(body).digest(opts.encoding);
}
