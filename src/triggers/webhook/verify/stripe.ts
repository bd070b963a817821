/**
 * Stripe: `Stripe-Signature: t=<seconds>,v1=<hex>[,v1=<hex>…]` (several v1 while a secret is
 * rolled; other schemes such as v0 are ignored), HMAC-SHA256 of `<t>.<body>` keyed with the
 * endpoint's secret as written (`whsec_…`, not decoded); `t` must be within the tolerance.
 */
import type { SignatureScheme } from './scheme.js';
import { anyDigestMatches, checkTimestamp, fail, header, hexDigest, hmacSha256, MAX_SIGNATURES, OK, utf8Key } from './shared.js';

export const stripe: SignatureScheme = {
  secretForm: "the endpoint's signing secret whsec_… as Stripe shows it",
  key: utf8Key,
  check({ headers, body, key, nowMs, toleranceMs }) {
    const value = header(headers, 'stripe-signature');
    if (typeof value !== 'string') return value;
    let timestamp: string | undefined;
    const candidates: Array<Buffer | undefined> = [];
    for (const item of value.split(',')) {
      const eq = item.indexOf('=');
      if (eq < 0) return fail('stripe-signature has an item without "="');
      const name = item.slice(0, eq).trim();
      const text = item.slice(eq + 1).trim();
      if (name === 't') {
        if (timestamp !== undefined) return fail('stripe-signature has more than one t');
        timestamp = text;
      } else if (name === 'v1') {
        if (candidates.length === MAX_SIGNATURES) return fail(`stripe-signature has more than ${MAX_SIGNATURES} v1 signatures`);
        candidates.push(hexDigest(text));
      }
    }
    if (timestamp === undefined) return fail('stripe-signature has no t');
    if (candidates.length === 0) return fail('stripe-signature has no v1 signature');
    const inWindow = checkTimestamp(timestamp, nowMs, toleranceMs);
    if (!inWindow.ok) return inWindow;
    return anyDigestMatches(candidates, hmacSha256(key, `${timestamp}.`, body)) ? OK : fail('no v1 signature matches');
  },
};
