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
