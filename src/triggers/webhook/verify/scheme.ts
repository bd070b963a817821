/**
 * The one interface every signature scheme of `verify:` implements (one small module per sender:
 * standard-webhooks.ts, stripe.ts, github.ts, slack.ts), listed once in index.ts.
 */

/** One request as a scheme sees it: the raw bytes as received, never a re-serialisation. */
export interface SignedRequest {
  /** Header names lower-cased (as intake receives them). */
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  /** The HMAC key, from `key(secret)`. */
  key: Buffer;
  /** The receiver's clock, in ms since the epoch. */
  nowMs: number;
  /** Timestamped schemes refuse a request signed further than this from `nowMs` (either way). */
  toleranceMs: number;
}

/** The outcome; `reason` is for the log only (the caller gets a generic 401). */
export type VerifyResult = { ok: true } | { ok: false; reason: string };

export interface SignatureScheme {
  /** The HMAC key a configured secret stands for; undefined when the secret has the wrong form. */
  key(secret: string): Buffer | undefined;
  /** What the secret should look like, for the operator's error message. */
  secretForm: string;
  check(req: SignedRequest): VerifyResult;
}
