/**
 * Load generation with autocannon's programmatic API: a warm-up (discarded), then a fixed-duration
 * measurement. Latencies are collected per response at full precision (autocannon's own histogram
 * has 1 ms buckets, too coarse for sub-millisecond overheads).
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationSec: number;
  warmupSec: number;
  /** Requests per second over all connections (open-ish loop); unset = as fast as possible. */
  overallRate?: number;
}

export interface LoadResult {
  connections: number;
  durationSec: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** 2xx answers per second. */
  rps: number;
  /** Latency of 2xx answers, ms. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  /** Wall-clock epoch ms of the measurement window. */
  startedAt: number;
  endedAt: number;
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function summarize(values: number[]): { p50: number; p90: number; p99: number; max: number; mean: number; n: number } {
  const a = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of a) sum += v;
  return { p50: percentile(a, 50), p90: percentile(a, 90), p99: percentile(a, 99), max: a.length ? a[a.length - 1]! : NaN, mean: a.length ? sum / a.length : NaN, n: a.length };
}

function run(o: LoadOptions, durationSec: number, onResponse?: (status: number, ms: number) => void): Promise<{ result: Awaited<ReturnType<typeof autocannon>>; startedAt: number; endedAt: number }> {
  const startedAt = Date.now();
  const inst = autocannon({
    url: o.url,
    method: o.method ?? 'POST',
    headers: o.headers,
    body: o.body,
    connections: o.connections,
    duration: durationSec,
    overallRate: o.overallRate,
    timeout: 30,
  });
  if (onResponse) inst.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => onResponse(status, ms));
  return Promise.resolve(inst).then((result) => ({ result, startedAt, endedAt: Date.now() }));
}

export async function load(o: LoadOptions): Promise<LoadResult> {
  if (o.warmupSec > 0) await run(o, o.warmupSec);
  const lat: number[] = [];
  const { result, startedAt, endedAt } = await run(o, o.durationSec, (status, ms) => {
    if (status >= 200 && status < 300) lat.push(ms);
  });
  const s = summarize(lat);
  const statusCodes: Record<string, number> = {};
  for (const [k, v] of Object.entries(result.statusCodeStats ?? {})) statusCodes[k] = v.count;
  const durationSec = (endedAt - startedAt) / 1000;
  return {
    connections: o.connections,
    durationSec,
    requests: Object.values(statusCodes).reduce((a, b) => a + b, 0),
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    rps: s.n / durationSec,
    p50: s.p50,
    p90: s.p90,
    p99: s.p99,
    max: s.max,
    mean: s.mean,
    startedAt,
    endedAt,
  };
}
