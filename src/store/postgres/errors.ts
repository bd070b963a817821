/**
 * PostgreSQL failures that mean "the database cannot be used now" (unreachable, shutting down,
 * out of disk or connections, corrupt data) become a StorageUnavailableError; anything else (a
 * constraint, a bug) stays as it is.
 */
import { StorageUnavailableError } from '../../common/errors.js';

// SQLSTATE classes 08 (connection), 53 (insufficient resources), 57P (operator intervention),
// 58 (system error), XX001/XX002 (corrupt data or index); Node's network error codes.
const SQLSTATE = /^(08|53|57P|58|XX00[12])/;
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

export function storageError(cause: unknown): unknown {
  if (cause instanceof StorageUnavailableError) return cause;
  const code = String((cause as { code?: unknown })?.code ?? '');
  const message = (cause as Error)?.message ?? String(cause);
  const lost = /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
  if (!SQLSTATE.test(code) && !NETWORK.has(code) && !lost) return cause;
  const err = new StorageUnavailableError(
    `the PostgreSQL database cannot be used now (${code || 'connection lost'}: ${message}); check the database server`,
    { cause },
  );
  if (code) (err as Error & { code?: string }).code = code;
  return err;
}
