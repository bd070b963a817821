/** Key/value inputs (query parameters, headers) are a map or a list of {key, value}. */
export function toPairs(value: unknown): Array<[string, string]> {
  if (value === undefined || value === null) return [];
  const pairs: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((e) => [String((e as { key: unknown }).key), (e as { value: unknown }).value])
    : Object.entries(value as Record<string, unknown>);
  const out: Array<[string, string]> = [];
  for (const [k, v] of pairs) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) out.push([k, String(item)]);
    else out.push([k, typeof v === 'object' ? JSON.stringify(v) : String(v)]);
  }
  return out;
}
