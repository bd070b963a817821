/**
 * Subset matching for expectations: an expected object lists the keys that matter (others in
 * the actual value are ignored), an expected array is matched element by element and must have
 * as many elements as the actual one, scalars must be equal (no type coercion: 1 ≠ "1").
 */
import { joinPointer } from '../definition/yaml-source.js';

export interface Mismatch {
  /** Where in the value, for people: `response.body.items[0].id`. */
  path: string;
  /** JSON pointer of the expected value in the test file (for its line:col). */
  pointer: string;
  expected: unknown;
  actual: unknown;
  /** Why, when "expected X, got Y" is not the whole story. */
  reason?: string;
}

export interface MatchOptions {
  /** Keys whose string value matches when the actual string contains it (error messages). */
  containsKeys?: ReadonlySet<string>;
}

export function subsetMismatches(
  expected: unknown,
  actual: unknown,
  path: string,
  pointer: string,
  opts: MatchOptions = {},
  key?: string,
): Mismatch[] {
  if (isObject(expected)) {
    if (!isObject(actual)) return [{ path, pointer, expected, actual, reason: `expected an object, got ${kind(actual)}` }];
    return Object.entries(expected).flatMap(([k, v]) => subsetMismatches(v, actual[k], `${path}.${k}`, joinPointer(pointer, k), opts, k));
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [{ path, pointer, expected, actual, reason: `expected an array, got ${kind(actual)}` }];
    if (actual.length !== expected.length)
      return [{ path, pointer, expected, actual, reason: `expected ${expected.length} item(s), got ${actual.length}` }];
    return expected.flatMap((v, i) => subsetMismatches(v, actual[i], `${path}[${i}]`, joinPointer(pointer, i), opts));
  }
  if (key !== undefined && opts.containsKeys?.has(key) && typeof expected === 'string' && typeof actual === 'string') {
    return actual.includes(expected) ? [] : [{ path, pointer, expected, actual, reason: 'expected the text to contain the expected one' }];
  }
  if (expected === actual) return [];
  return [{ path, pointer, expected, actual }];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

function kind(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)}`;
}
