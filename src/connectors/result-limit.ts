/**
 * The step result size limit: an HTTP response body (core.http, HCM actions, Raw Request) is read
 * as a stream and counted; past the limit the request is cancelled and the step fails with a
 * clear error. Never buffered whole first, so a 300 MB answer costs at most the limit in memory,
 * and the execution ends (`failed`) instead of dying in serialisation and being downloaded again
 * on every restart.
 */
import { ActionError } from '../common/errors.js';
import type { RuntimeServices } from './types.js';

export const RESULT_LIMIT_ENV = 'HCM_RUNNER_MAX_RESULT_BYTES';
export const DEFAULT_MAX_RESULT_BYTES = 16 * 1024 * 1024;

/** HCM_RUNNER_MAX_RESULT_BYTES (whole bytes, at least 1), else the default. */
export function resultLimitFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env[RESULT_LIMIT_ENV];
  if (raw === undefined || raw.trim() === '') return DEFAULT_MAX_RESULT_BYTES;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${RESULT_LIMIT_ENV} must be a whole number of bytes, at least 1 (got "${raw}")`);
  return n;
}

export function maxResultBytes(services: RuntimeServices | undefined): number {
  return services?.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
}

function tooLarge(what: string, limit: number, seen: string): ActionError {
  return new ActionError(
    `${what}: the response body is larger than the step result limit of ${limit} bytes (${seen}); ask for less (paging, filters) or raise ${RESULT_LIMIT_ENV}`,
    { code: 'result_too_large', retryable: false },
  );
}

interface Body extends AsyncIterable<Buffer | Uint8Array> {
  destroy(err?: Error): unknown;
}

/**
 * Reads a response body up to `limit` bytes. A Content-Length above the limit fails before any
 * byte is read; otherwise the bytes are counted as they arrive and the stream is destroyed (the
 * connection closed) as soon as the count passes the limit.
 */
export async function readLimited(body: Body, headers: Record<string, string | string[] | undefined>, limit: number, what: string): Promise<Buffer> {
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    body.destroy();
    throw tooLarge(what, limit, `Content-Length ${declared}`);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limit) {
      body.destroy();
      throw tooLarge(what, limit, `more than ${limit} bytes arrived`);
    }
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  }
  return Buffer.concat(chunks, total);
}
