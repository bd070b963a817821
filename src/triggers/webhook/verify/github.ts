/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the body keyed with the webhook's
 * secret as written. No timestamp: replays are the idempotency key's job (X-GitHub-Delivery).
 */
import type { SignatureScheme } from './scheme.js';
import { fail, header, hexDigest, hmacSha256, OK, sameDigest, utf8Key } from './shared.js';

const PREFIX = 'sha256=';

export const github: SignatureScheme = {
  secretForm: 'the webhook secret as entered on GitHub',
  key: utf8Key,
  check({ headers, body, key }) {
    const value = header(headers, 'x-hub-signature-256');
    if (typeof value !== 'string') return value;
    if (!value.startsWith(PREFIX)) return fail(`x-hub-signature-256 does not start with ${PREFIX}`);
    return sameDigest(hexDigest(value.slice(PREFIX.length)), hmacSha256(key, body)) ? OK : fail('signature does not match');
  },
};
