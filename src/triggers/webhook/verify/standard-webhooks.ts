/**
 * Standard Webhooks (standardwebhooks.com; Svix and others): headers `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` — space-separated `v1,<base64>` entries, any of
 * which may match (several while a secret is rotated; other versions such as v1a are ignored) —
 * over `<id>.<timestamp>.<body>`, HMAC-SHA256 keyed with the base64 part of the secret
 * `whsec_<base64>`; the timestamp must be within the tolerance.
 */
import type { SignatureScheme } from './scheme.js';
import { anyDigestMatches, base64Digest, checkTimestamp, fail, header, hmacSha256, MAX_SIGNATURES, OK } from './shared.js';

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export const standardWebhooks: SignatureScheme = {
  secretForm: 'whsec_ followed by the base64 of the key',
  key(secret) {
    // Like the reference library: the prefix is optional, the rest is the key in base64.
    const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    return b64 !== '' && BASE64.test(b64) ? Buffer.from(b64, 'base64') : undefined;
  },
  check({ headers, body, key, nowMs, toleranceMs }) {
    const id = header(headers, 'webhook-id');
    if (typeof id !== 'string') return id;
    const timestamp = header(headers, 'webhook-timestamp');
    if (typeof timestamp !== 'string') return timestamp;
    const signatures = header(headers, 'webhook-signature');
    if (typeof signatures !== 'string') return signatures;
    const inWindow = checkTimestamp(timestamp, nowMs, toleranceMs);
    if (!inWindow.ok) return inWindow;
    const candidates: Array<Buffer | undefined> = [];
    let entries = 0;
    for (const entry of signatures.split(' ')) {
      if (entry === '') continue;
      if (++entries > MAX_SIGNATURES) return fail(`webhook-signature has more than ${MAX_SIGNATURES} signatures`);
      const comma = entry.indexOf(',');
      if (comma < 0) return fail('webhook-signature has an entry without ","');
      if (entry.slice(0, comma) === 'v1') candidates.push(base64Digest(entry.slice(comma + 1)));
    }
    if (candidates.length === 0) return fail('webhook-signature has no v1 signature');
    return anyDigestMatches(candidates, hmacSha256(key, `${id}.${timestamp}.`, body)) ? OK : fail('no v1 signature matches');
  },
};
