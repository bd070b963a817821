/** Key/value inputs (query parameters, headers) of every connector: a map or a list of {key, value}. */
import { ActionError } from '../common/errors.js';

export type QueryPairs = Array<[string, string]>;

/** A key/value input: a map, or a list of {key, value} (or [key, value]). Empty values are dropped. */
export function keyValuePairs(value: unknown, label = 'key/value input'): QueryPairs {
  if (value === undefined || value === null || value === '') return [];
  const out: QueryPairs = [];
  const push = (k: unknown, v: unknown) => {
    if (typeof k !== 'string' || k === '') throw new ActionError(`${label}: every entry needs a non-empty key`, { code: 'invalid_input' });
    if (v === undefined || v === null) return;
    if (Array.isArray(v)) for (const item of v) out.push([k, scalar(item)]);
    else out.push([k, scalar(v)]);
  };
  if (Array.isArray(value)) {
    for (const item of value) {
      if (Array.isArray(item)) push(item[0], item[1]);
      else if (item && typeof item === 'object') push((item as Record<string, unknown>).key, (item as Record<string, unknown>).value);
      else throw new ActionError(`${label}: list items must be {key, value}`, { code: 'invalid_input' });
    }
  } else if (typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) push(k, v);
  } else {
    throw new ActionError(`${label}: expected a map or a list of {key, value}`, { code: 'invalid_input' });
  }
  return out;
}

function scalar(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
