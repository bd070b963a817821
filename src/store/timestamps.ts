/** Timestamps as the store keeps them: ISO-8601 text in UTC, whatever the engine hands back. */

export function iso(value: string | Date | undefined | null): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime())) throw new Error(`invalid timestamp: ${String(value)}`);
  return d.toISOString();
}

/** What `Date.prototype.toISOString` writes (years 0–9999). */
const CANONICAL_ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * `iso` for the timestamps of records saved and read: they were written by `toISOString`, so a
 * string in that exact form is kept as it is instead of being parsed and formatted again (three
 * times per record). Anything else (a PostgreSQL Date, another form) goes through `iso`.
 */
export function recordIso(value: string | Date | undefined | null): string | undefined {
  return typeof value === 'string' && CANONICAL_ISO.test(value) ? value : iso(value);
}
