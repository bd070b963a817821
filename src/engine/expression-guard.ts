/**
 * Keeps one expression from taking the process down. JSONata's own guardrails (timeout, stack
 * depth, sequence size; see `expressionLimits`) are checked between evaluation steps only, never
 * inside a native function, so three natives that do far more work than their input suggests are
 * replaced here, and heap growth is watched between steps:
 *
 * - `$sort`: JSONata's merge sort copies the rest of the array at every comparison (quadratic
 *   memory: 20k numbers took 2.4 s and 850 MB, 100k killed the process). Replaced by a stable
 *   O(n log n) sort; a comparator function is awaited per comparison, so the timeout applies.
 * - `$distinct`: compares every pair (60k items took 5 s). Replaced by one pass keyed on a
 *   canonical form of each value (same equality as JSONata's deep-equals).
 * - `$pad`: builds a string as wide as asked (`$pad('', 1e8)`: 8.6 s, 2 GB). Widths above
 *   `GUARD_LIMITS.maxPadWidth` are refused.
 * - sizes: `$sort` and `$distinct` refuse inputs above the sequence limit.
 * - memory: between steps the heap is sampled (every `HEAP_SAMPLE_MS`); an evaluation whose heap growth
 *   passes `GUARD_LIMITS.maxHeapGrowthBytes`, or that runs while the heap is past
 *   `GUARD_LIMITS.maxHeapFraction` of its limit, is stopped.
 *
 * - regular expressions (`$match`, `$replace`, `$split`, `$contains`): one `exec` is a single
 *   native call no check can interrupt, and a pattern with nested quantifiers backtracks
 *   exponentially (`/(a+)+$/` on 28 × 'a' + 'b': 31 s). V8 can switch a regex that backtracks
 *   too much to its linear-time engine; that is turned on below, for the whole process, when the
 *   engine is loaded (V8 reads the flag at match time, so setting it at run time works — unlike
 *   heap sizes). The linear engine cannot run backreferences or lookaround: those still backtrack.
 *
 * Why not a worker thread per evaluation: measured in docs/authoring.md "Limits" (a round trip
 * costs ~5× an in-process evaluation of a small expression and milliseconds for a large trigger).
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import jsonata, { type Expression, type Focus as JsonataFocus } from 'jsonata';
import { expressionLimits } from '../definition/templates.js';

// After 50 000 backtracks (V8's default threshold) a regex runs on the linear-time engine instead.
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

export const GUARD_LIMITS = {
  /** `$pad` widths above this are refused (characters). */
  maxPadWidth: 1_000_000,
  /** Items `$sort` and `$distinct` accept (JSONata's sequence limit). */
  maxItems: expressionLimits.sequence,
  /** Heap growth one evaluation may cause before it is stopped. */
  maxHeapGrowthBytes: 256 * 1024 * 1024,
  /** Past this fraction of the heap limit every evaluation is stopped (the process comes first). */
  maxHeapFraction: 0.8,
};

/**
 * Milliseconds between two heap samples of one evaluation (a sample costs about a microsecond;
 * sampling by time, not by step count, also catches few steps that each allocate a lot).
 */
const HEAP_SAMPLE_MS = 5;

/** Longest stretch one evaluation holds the event loop before it yields to other work. */
const YIELD_EVERY_MS = 10;

/** A guardrail of ours (JSONata's own use codes D1011, D1012, D2014, D2015). */
export class ExpressionLimitError extends Error {
  readonly code = 'HCM_LIMIT';
  constructor(message: string) {
    super(message);
    this.name = 'ExpressionLimitError';
  }
}

type Comparator = (a: unknown, b: unknown) => unknown;
/** What JSONata passes as `this` to a native function (the part used here). */
interface Focus {
  createSequence?: () => unknown[];
}
interface GuardState {
  hcmSampledAt?: number;
  hcmHeapStart?: number;
  /** When the evaluation last took the event loop (after starting or after a yield). */
  hcmSliceAt?: number;
}

// JSONata's own $pad, called after the width check (same code-point semantics).
const originalPad = (await jsonata('$pad').evaluate(null)) as { implementation: (...args: unknown[]) => unknown };

const guarded = new WeakSet<Expression>();

/** Installs the bounded natives and the heap watch on a compiled expression (once per expression). */
export function guardExpression(expression: Expression): void {
  if (guarded.has(expression)) return;
  guarded.add(expression);
  // Same signatures as JSONata's built-ins, so argument checks and errors stay the same.
  const native = (f: (this: Focus, ...args: never[]) => unknown) => f as unknown as (this: JsonataFocus, ...args: unknown[]) => unknown;
  expression.registerFunction('sort', native(boundedSort), '<af?:a>');
  expression.registerFunction('distinct', native(boundedDistinct), '<x:x>');
  expression.registerFunction('pad', native(boundedPad), '<s-ns?:s>');
  // JSONata calls this before every evaluation step.
  expression.assign(Symbol.for('jsonata.__evaluate_entry') as unknown as string, guardStep);
}

/**
 * Called by JSONata before every evaluation step. Samples the heap (see above) and, once one
 * evaluation has held the event loop for `YIELD_EVERY_MS`, lets it serve other work (webhooks,
 * /healthz, other executions) before going on: JSONata awaits this callback, but its own steps
 * are microtasks, which never let I/O in. A short expression never reaches the first yield.
 */
function guardStep(_expr: unknown, _input: unknown, environment: { base: GuardState }): void | Promise<void> {
  const state = environment.base;
  const now = Date.now();
  sampleHeap(state, now);
  state.hcmSliceAt ??= now;
  if (now - state.hcmSliceAt < YIELD_EVERY_MS) return;
  return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
    state.hcmSliceAt = Date.now();
  });
}

/**
 * The process's heap, sampled at most every `HEAP_SAMPLE_MS` for all evaluations together: the
 * heap is one for the process, so a sample another evaluation took a moment ago is as good a
 * starting point, and most evaluations (a few µs each) then take none of their own.
 */
let shared: { at: number; used: number; limit: number } | undefined;

function heapAt(now: number): { used: number; limit: number } {
  if (!shared || now - shared.at >= HEAP_SAMPLE_MS || now < shared.at) {
    const heap = getHeapStatistics();
    shared = { at: now, used: heap.used_heap_size, limit: heap.heap_size_limit };
  }
  return shared;
}

function sampleHeap(state: GuardState, now: number): void {
  if (state.hcmSampledAt !== undefined && now - state.hcmSampledAt < HEAP_SAMPLE_MS) return;
  state.hcmSampledAt = now;
  const heap = heapAt(now);
  if (state.hcmHeapStart === undefined) {
    state.hcmHeapStart = heap.used;
    return;
  }
  if (heap.used - state.hcmHeapStart > GUARD_LIMITS.maxHeapGrowthBytes) {
    throw new ExpressionLimitError(`the expression used more than ${mib(GUARD_LIMITS.maxHeapGrowthBytes)} of memory and was stopped`);
  }
  if (heap.used > heap.limit * GUARD_LIMITS.maxHeapFraction) {
    throw new ExpressionLimitError(`the process is low on memory (${mib(heap.used)} of ${mib(heap.limit)} in use); the expression was stopped`);
  }
}

function mib(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MiB`;
}

function checkItems(name: string, arr: unknown[]): void {
  if (arr.length > GUARD_LIMITS.maxItems) {
    throw new ExpressionLimitError(`$${name} of ${arr.length} items is above the limit of ${GUARD_LIMITS.maxItems}`);
  }
}

async function boundedSort(this: Focus, arr: unknown[] | undefined, comparator?: Comparator): Promise<unknown[] | undefined> {
  if (arr === undefined) return undefined;
  if (arr.length <= 1) return arr;
  checkItems('sort', arr);
  if (comparator === undefined) {
    const numbers = arr.every((v) => typeof v === 'number' && Number.isFinite(v));
    if (!numbers && !arr.every((v) => typeof v === 'string')) {
      // JSONata's own error (message filled in from its code).
      throw { code: 'D3070', stack: new Error().stack, index: 1 };
    }
    // Array.prototype.sort is stable, like JSONata's merge sort.
    return arr.slice().sort((a, b) => ((a as number) > (b as number) ? 1 : (a as number) < (b as number) ? -1 : 0));
  }
  return mergeSort(arr.slice(), comparator);
}

/**
 * Bottom-up stable merge sort with an async comparator: `comparator(a, b)` true means b goes
 * first (JSONata's convention). O(n log n) comparisons, two arrays of n.
 */
async function mergeSort(items: unknown[], comparator: Comparator): Promise<unknown[]> {
  let src = items;
  let dst = new Array<unknown>(items.length);
  for (let width = 1; width < src.length; width *= 2) {
    for (let lo = 0; lo < src.length; lo += 2 * width) {
      const mid = Math.min(lo + width, src.length);
      const hi = Math.min(lo + 2 * width, src.length);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        if (await comparator(src[i], src[j])) dst[k++] = src[j++];
        else dst[k++] = src[i++];
      }
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    [src, dst] = [dst, src];
  }
  return src;
}

function boundedDistinct(this: Focus, arr: unknown): unknown {
  if (!Array.isArray(arr) || arr.length <= 1) return arr;
  checkItems('distinct', arr);
  const seen = new Set<string>();
  const out = (arr as { sequence?: boolean }).sequence && this.createSequence ? this.createSequence() : [];
  for (const value of arr) {
    const key = canonical(value);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(value);
  }
  return out;
}

/** A string equal for two values exactly when JSONata's deep-equals says they are equal. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    // Functions and NaN are never equal to anything else in deep-equals: keep each one.
    if (typeof value === 'function' || (typeof value === 'number' && Number.isNaN(value))) return `u:${Math.random()}`;
    return typeof value === 'string' ? JSON.stringify(value) : `${typeof value}:${String(value)}`;
  }
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.getOwnPropertyNames(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
}

function boundedPad(this: Focus, str: string | undefined, width: number, char?: string): unknown {
  if (Math.abs(Math.trunc(width)) > GUARD_LIMITS.maxPadWidth) {
    throw new ExpressionLimitError(`$pad width ${width} is above the limit of ${GUARD_LIMITS.maxPadWidth} characters`);
  }
  return originalPad.implementation.call(this, str, width, char);
}
