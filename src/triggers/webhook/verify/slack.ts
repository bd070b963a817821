/**
 * Slack: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<body>`
 * keyed with the app's signing secret as written; the timestamp must be within the tolerance.
 */
import type { SignatureScheme } from './scheme.js';
import { checkTimestamp, fail, header, hexDigest, hmacSha256, OK, sameDigest, utf8Key } from './shared.js';

const PREFIX = 'v0=';

export const slack: SignatureScheme = {
  secretForm: "the Slack app's signing secret",
  key: utf8Key,
  check({ headers, body, key, nowMs, toleranceMs }) {
    const timestamp = header(headers, 'x-slack-request-timestamp');
    if (typeof timestamp !== 'string') return timestamp;
    const signature = header(headers, 'x-slack-signature');
    if (typeof signature !== 'string') return signature;
    const inWindow = checkTimestamp(timestamp, nowMs, toleranceMs);
    if (!inWindow.ok) return inWindow;
    if (!signature.startsWith(PREFIX)) return fail(`x-slack-signature does not start with ${PREFIX}`);
    const expected = hmacSha256(key, `v0:${timestamp}:`, body);
    return sameDigest(hexDigest(signature.slice(PREFIX.length)), expected) ? OK : fail('signature does not match');
  },
};
