/**
 * The step result size limit: an HTTP response body (core.http, HCM actions, Raw Request) is read
 * as a stream and counted (http/body-limit.ts); past the limit the request is cancelled and the
 * step fails with a clear error, so the execution ends (`failed`) instead of dying in
 * serialisation and being downloaded again on every restart.
 */
import { ActionError } from '../common/errors.js';
import type { RuntimeServices } from './types.js';
import { settingSpecs } from '../settings/spec.js';

/** Named in the error; the setting (`--max-result-bytes`) is read by src/settings/ and handed down in RuntimeServices. */
export const RESULT_LIMIT_ENV = settingSpecs.maxResultBytes.env;
export const DEFAULT_MAX_RESULT_BYTES = settingSpecs.maxResultBytes.default;

export function maxResultBytes(services: RuntimeServices | undefined): number {
  return services?.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
}

/** The error of a body past the limit (counted by http/body-limit.ts); not retryable: another attempt would be as large. */
export function tooLarge(what: string, limit: number, seen: string): ActionError {
  return new ActionError(
    `${what}: the response body is larger than the step result limit of ${limit} bytes (${seen}); ask for less (paging, filters) or raise ${RESULT_LIMIT_ENV}`,
    { code: 'result_too_large', retryable: false },
  );
}
