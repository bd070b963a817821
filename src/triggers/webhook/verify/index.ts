/**
 * `verify:` — the signature schemes real senders use, one module each behind `SignatureScheme`.
 * The scheme names are the spec's enum (webhook/spec.ts) and `VerifyOptions['scheme']`; this
 * record is where a name meets its code (test/triggers/verify-schemes.test.ts checks they agree).
 */
import type { VerifyOptions } from '../../../definition/types.js';
import { github } from './github.js';
import type { SignatureScheme, VerifyResult } from './scheme.js';
import { slack } from './slack.js';
import { standardWebhooks } from './standard-webhooks.js';
import { stripe } from './stripe.js';

export type { SignatureScheme, SignedRequest, VerifyResult } from './scheme.js';

export const signatureSchemes: Readonly<Record<VerifyOptions['scheme'], SignatureScheme>> = {
  'standard-webhooks': standardWebhooks,
  stripe,
  github,
  slack,
};

/** The verdict on one request, or `unusableSecret` when the configured secret cannot be a key. */
export function verifySignature(
  opts: Pick<VerifyOptions, 'scheme' | 'toleranceMs'>,
  secret: string,
  body: Buffer,
  headers: Readonly<Record<string, string>>,
  nowMs: number,
): VerifyResult | { ok: false; unusableSecret: string } {
  const scheme = signatureSchemes[opts.scheme];
  const key = scheme.key(secret);
  if (!key) return { ok: false, unusableSecret: `the ${opts.scheme} signing secret has the wrong form; expected ${scheme.secretForm}` };
  return scheme.check({ headers, body, key, nowMs, toleranceMs: opts.toleranceMs });
}
