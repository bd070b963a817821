/**
 * The plain request shape the webhook trigger works on. It carries no HTTP-server types so the
 * trigger logic can be tested and reused (server, CLI replays, benchmarks) without Hono or Node's
 * http module.
 */
export interface WebhookRequest {
  /** Upper-case HTTP method. */
  method: string;
  /** Extra path after the token, without the leading `/` ('' when none). */
  pathFragment: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  /** Header names lower-cased; repeated headers joined with ", " (Node's convention). */
  headers: Record<string, string>;
  rawBody: Buffer;
}

/** What a webhook request answers when it is rejected before any execution exists. */
export class WebhookRejection extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 405 | 413 | 415 | 429 | 500 | 503,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'WebhookRejection';
  }
}
