/** How many rows a list may ask the store for, and what it gets when it does not say. */

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 500;

export function clampLimit(limit: number | undefined, def = DEFAULT_LIST_LIMIT, max = MAX_LIST_LIMIT): number {
  if (limit === undefined || !Number.isFinite(limit)) return def;
  return Math.max(1, Math.min(max, Math.floor(limit)));
}
