/**
 * What the signature schemes share: bounded header reading, strict decoding, HMAC-SHA256 over the
 * raw bytes, a constant-time comparison and the timestamp window. Hostile input is ordinary here:
 * every header is length-checked before it is split, and a scheme examines at most
 * MAX_SIGNATURES candidate signatures, so a malformed or huge header costs microseconds.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { VerifyResult } from './scheme.js';

/** Longest signature or timestamp header read (32 Standard Webhooks signatures take ~1.6 KB). */
export const MAX_HEADER_CHARS = 4096;
/** Most candidate signatures looked at in one header (senders send one, two while rotating keys). */
export const MAX_SIGNATURES = 32;

export const fail = (reason: string): VerifyResult => ({ ok: false, reason });
export const OK: VerifyResult = { ok: true };

/** A header's value, or a failure when it is missing, empty or longer than MAX_HEADER_CHARS. */
export function header(headers: Readonly<Record<string, string>>, name: string): string | VerifyResult {
  const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
  if (value === undefined || value.trim() === '') return fail(`missing header ${name}`);
  if (value.length > MAX_HEADER_CHARS) return fail(`header ${name} longer than ${MAX_HEADER_CHARS} characters`);
  return value.trim();
}

/** HMAC-SHA256 of the parts in order (strings as UTF-8, buffers as they are). */
export function hmacSha256(key: Buffer, ...parts: Array<string | Buffer>): Buffer {
  const mac = createHmac('sha256', key);
  for (const p of parts) mac.update(p);
  return mac.digest();
}

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const BASE64_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

/** A 32-byte digest written in hex, or undefined for anything else. */
export function hexDigest(text: string): Buffer | undefined {
  return HEX_SHA256.test(text) ? Buffer.from(text, 'hex') : undefined;
}

/** A 32-byte digest written in (padded, standard) base64, or undefined for anything else. */
export function base64Digest(text: string): Buffer | undefined {
  return BASE64_SHA256.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** Constant-time equality of two digests (a length mismatch is simply false). */
export function sameDigest(given: Buffer | undefined, expected: Buffer): boolean {
  return given !== undefined && given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Whether any candidate equals `expected`. Every candidate up to the bound is compared (no early
 * exit), so the time taken says nothing about which one was close.
 */
export function anyDigestMatches(candidates: ReadonlyArray<Buffer | undefined>, expected: Buffer): boolean {
  let match = false;
  for (const c of candidates) if (sameDigest(c, expected)) match = true;
  return match;
}

const SECONDS = /^\d{1,12}$/;

/** A Unix timestamp in seconds within `toleranceMs` of `nowMs`, or the failure. */
export function checkTimestamp(text: string, nowMs: number, toleranceMs: number): VerifyResult {
  if (!SECONDS.test(text)) return fail('malformed timestamp');
  const atMs = Number(text) * 1000;
  if (nowMs - atMs > toleranceMs) return fail('timestamp older than the tolerance');
  if (atMs - nowMs > toleranceMs) return fail('timestamp further in the future than the tolerance');
  return OK;
}

/** The UTF-8 bytes of a secret used as an HMAC key as written (Stripe, GitHub, Slack). */
export function utf8Key(secret: string): Buffer | undefined {
  return secret === '' ? undefined : Buffer.from(secret, 'utf8');
}
