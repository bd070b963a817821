/**
 * What an integration may put into the answer of a webhook (docs/security.md "Webhook responses").
 * Its headers are its own except for the message framing, which is the server's: a
 * `content-length` that does not match the body, or a `transfer-encoding` passed through from an
 * upstream answer, would desynchronise the caller's keep-alive connection (the next answer read
 * on it would be the integration's leftover bytes). Names and values must be sendable at all
 * (src/common/http-header-syntax.ts); a body never goes with 204, 304 or a HEAD request; and
 * binary bodies are downloads, never pages rendered on the runner's origin.
 */
import { headerNameProblem, headerValueProblem } from '../../common/http-header-syntax.js';

/** Framing and hop-by-hop headers (RFC 9110 §7.6.1, §8.6, RFC 9112 §6): set by the server only. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

export function isFramingHeader(lowerCaseName: string): boolean {
  return FRAMING.has(lowerCaseName) || lowerCaseName.startsWith('proxy-');
}

/** Statuses whose answers have no body (RFC 9110 §15.3.5, §15.4.5). */
export function statusHasNoBody(status: number): boolean {
  return status === 204 || status === 304;
}

/** A response an integration asked for that cannot be sent as it is; the caller answers 500. */
export class UnsendableResponseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsendableResponseError';
  }
}

/**
 * An integration's response headers → what may be sent: names lower-cased, framing headers
 * dropped (named in `dropped`, for one log line per integration). Throws
 * `UnsendableResponseError` for a name or value no HTTP message can carry.
 */
export function sendableHeaders(given: Record<string, unknown> | undefined): { headers: Record<string, string>; dropped: string[] } {
  const headers: Record<string, string> = {};
  const dropped: string[] = [];
  for (const [rawName, rawValue] of Object.entries(given ?? {})) {
    if (rawValue === undefined || rawValue === null) continue;
    const nameProblem = headerNameProblem(rawName);
    if (nameProblem) throw new UnsendableResponseError(`response header name ${JSON.stringify(rawName)} ${nameProblem}`);
    const name = rawName.toLowerCase();
    if (isFramingHeader(name)) {
      dropped.push(name);
      continue;
    }
    const value = String(rawValue);
    const valueProblem = headerValueProblem(value);
    if (valueProblem) throw new UnsendableResponseError(`the value of response header ${JSON.stringify(rawName)} ${valueProblem}`);
    headers[name] = value;
  }
  return { headers, dropped };
}

/** A content type (from an integration or an uploaded file's part) checked like any header value. */
export function sendableContentType(value: string): string {
  const problem = headerValueProblem(value);
  if (problem) throw new UnsendableResponseError(`the response content type ${problem}`);
  return value;
}

/**
 * The Content-Disposition of a binary body: always an attachment, so a browser saves the file
 * instead of rendering it (an uploaded `text/html` file echoed back must not become a page on the
 * runner's origin). The integration's parameters, such as `filename`, are kept.
 */
export function attachmentDisposition(given: string | undefined): string {
  if (!given) return 'attachment';
  const semicolon = given.indexOf(';');
  return semicolon < 0 ? 'attachment' : `attachment${given.slice(semicolon)}`;
}
