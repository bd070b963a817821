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
