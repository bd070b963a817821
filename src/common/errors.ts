/**
 * Errors an action throws. The engine adds the integration, step and action names, so an action
 * only says what went wrong on its side (status, the service's own error text).
 */
export interface ActionErrorDetails {
  /** HTTP status of a failed call, when there was one. */
  status?: number;
  /** Machine-readable kind, e.g. `unauthorized`, `rate_limited`, `timeout`, `invalid_input`. */
  code?: string;
  /** The remote service's error body (`error`, `errors`), already free of secrets. */
  remote?: unknown;
  /** Whether retrying the step could help (network errors, 429, 5xx). */
  retryable?: boolean;
  /**
   * How long the service asked to wait before trying again (its Retry-After, in ms from the
   * answer, capped by the connector): a step's `retry` waits at least this long.
   */
  retryAfterMs?: number;
}

export class ActionError extends Error {
  readonly details: ActionErrorDetails;
  constructor(message: string, details: ActionErrorDetails = {}) {
    super(message);
    this.name = 'ActionError';
    this.details = details;
  }
}

/** Thrown by core.stop to end an execution successfully; not an error for the record. */
export class StopSignal extends Error {
  constructor() {
    super('execution stopped by core.stop');
    this.name = 'StopSignal';
  }
}

/**
 * The store cannot be used right now: the database file is corrupt or unreadable, the disk is
 * full or read-only, the database server is unreachable. Stores raise it; the HTTP layer answers
 * 503 with Retry-After (in one place: the app's error handler) and logs `message`, which says
 * what is wrong and what to do.
 */
export class StorageUnavailableError extends Error {
  /** Seconds a caller should wait before retrying. */
  readonly retryAfterSec = 30;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}

/**
 * A failure that has an HTTP answer: status, message (answered as `{"error": message}` or as the
 * console's error page) and headers such as Retry-After. Every HTTP-facing rule throws this one
 * type (webhook rejections, admin API and console errors, backpressure); the server's single
 * error handler (src/server/app.ts) and webhook intake (src/triggers/webhook/intake.ts) answer
 * it through `httpErrorOf` and `errorResponse` below.
 */
export class HttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 500 | 501 | 503,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** What a caller who is not the operator is told of an unusable store (the details go to the log). */
export const STORAGE_UNAVAILABLE = 'storage unavailable';

/**
 * The HTTP answer of an error, when it has one: an `HttpError` as it is, a
 * `StorageUnavailableError` as 503 with Retry-After (the operator's to fix; callers retry later).
 * Its message names paths and files, so it is answered only with `detail` (the operator's own
 * routes); anyone else gets "storage unavailable" and the caller of this function logs the rest.
 * Anything else is a bug or an unexpected failure: undefined (the caller answers 500).
 */
export function httpErrorOf(err: unknown, opts: { detail?: boolean } = {}): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof StorageUnavailableError)
    return new HttpError(503, opts.detail ? err.message : STORAGE_UNAVAILABLE, { 'retry-after': String(err.retryAfterSec) });
  return undefined;
}

/** The JSON form of an HTTP error: `{"error": message}` with its status and headers. */
export function errorResponse(err: HttpError): { status: number; headers: Record<string, string>; body: string } {
  return { status: err.status, headers: { ...err.headers, 'content-type': 'application/json' }, body: JSON.stringify({ error: err.message }) };
}
