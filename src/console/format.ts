/** How the console writes times, durations and JSON (server-side, so every page agrees). */

/** `2026-11-22 17:40:01 UTC`; the `<time datetime>` keeps the exact ISO value. */
export function formatTime(iso: string | undefined | null): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const min = Math.floor(ms / 60_000);
  return `${min} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** `512 B`, `64.0 KiB`, `6.0 MiB`. */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Past this many characters a JSON block is cut (the API has the whole value). */
export const JSON_DISPLAY_LIMIT = 20_000;

export function formatJson(value: unknown, limit = JSON_DISPLAY_LIMIT): string {
  const text = value === undefined ? '' : (JSON.stringify(value, null, 2) ?? '');
  return text.length > limit
    ? `${text.slice(0, limit)}\n… (${text.length - limit} more characters; GET the record from the admin API for all of it)`
    : text;
}

/** A one-line preview of a value, for lists. */
export function preview(value: unknown, max = 120): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * An execution ID shortened for titles: its last 8 characters. Execution IDs are time-ordered
 * UUIDs (src/common/ids.ts) whose first characters are the creation time — the same for every
 * execution of the same minute; the last ones are random.
 */
export function shortId(id: string): string {
  return id.slice(-8);
}
