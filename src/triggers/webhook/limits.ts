/**
 * Server-wide limits of webhook intake that keep parsing linear and bounded, and the list of
 * caller headers whose values never reach `$trigger` (and so never reach records, captures or
 * logs). Per-webhook limits (`maxBodyBytes`) live in the integration file; these are the
 * operator's (docs/server.md "Intake limits").
 */
import { settingSpecs } from '../../settings/spec.js';

/** The limits one request is parsed under. */
export interface IntakeLimits {
  /**
   * Parts of one multipart/form-data body, and fields of one x-www-form-urlencoded body; above it
   * the request is refused with 413 before the values are built.
   */
  maxFormParts: number;
  /** Nesting of arrays and objects in a JSON body (or JSON part); above it → 400. */
  maxJsonDepth: number;
  /** Lower-case header names whose values are replaced by `[redacted]` in `$trigger.headers`. */
  redactedHeaders: ReadonlySet<string>;
}

export const DEFAULT_MAX_FORM_PARTS = settingSpecs.maxFormParts.default;
/**
 * Deep enough for any real payload; shallow enough that nothing downstream (expressions, the
 * execution record, the store) can run out of stack on it.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * Headers that carry credentials. Authorization headers never appear in execution records, and
 * `$trigger` is part of the record, so their values are replaced. The operator can add names
 * (`--redact-headers`), never remove these.
 */
export const DEFAULT_REDACTED_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-auth-token',
  'x-access-token',
  'x-amz-security-token',
];

export const DEFAULT_INTAKE_LIMITS: IntakeLimits = {
  maxFormParts: DEFAULT_MAX_FORM_PARTS,
  maxJsonDepth: MAX_JSON_DEPTH,
  redactedHeaders: new Set(DEFAULT_REDACTED_HEADERS),
};

/** The limits with the operator's additions: extra header names are added to the built-in list. */
export function intakeLimits(opts: { maxFormParts?: number; redactHeaders?: readonly string[] } = {}): IntakeLimits {
  const extra = headerNames(opts.redactHeaders ?? []);
  return {
    maxFormParts: opts.maxFormParts ?? DEFAULT_MAX_FORM_PARTS,
    maxJsonDepth: MAX_JSON_DEPTH,
    redactedHeaders: extra.length ? new Set([...DEFAULT_REDACTED_HEADERS, ...extra]) : DEFAULT_INTAKE_LIMITS.redactedHeaders,
  };
}

/** `a, b,c` → `['a', 'b', 'c']` (the form of `--redact-headers` and HCM_RUNNER_REDACT_HEADERS). */
export function parseHeaderList(value: string | undefined): string[] {
  return headerNames((value ?? '').split(','));
}

/** Header names as they are compared: trimmed, lower-case, blanks dropped. */
function headerNames(names: readonly string[]): string[] {
  return names.map((h) => h.trim().toLowerCase()).filter(Boolean);
}
