/**
 * Load generation: a warm-up (discarded), then a fixed-duration measurement. Closed-loop runs use
 * Debian's `wrk` (C, one thread, µs latency histogram) when the machine has it, so the generator
 * leaves the cores to what it measures; open-loop runs (`overallRate`) and machines without wrk
 * use autocannon's programmatic API, with latencies collected per response at full precision
 * (autocannon's own histogram has 1 ms buckets, too coarse for sub-millisecond overheads).
 * HCM_BENCH_GENERATOR=autocannon forces autocannon.
 */
import autocannon from 'autocannon';
import { runWrk, wrkAvailable } from './wrk.js';

/** Which generator closed-loop runs use on this machine (named in the report). */
export function closedLoopGenerator(): 'wrk' | 'autocannon' {
  return process.env.HCM_BENCH_GENERATOR !== 'autocannon' && wrkAvailable() ? 'wrk' : 'autocannon';
}

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
  /**
   * A header whose value no other request sends, warm-up included (e.g. an idempotency key):
   * wrk's Lua counter behind a prefix unique to each wrk run, or autocannon's `[<id>]` replacement.
   */
  distinctHeader?: string;
}

let runs = 0;
/** A prefix no other generator run of this process (or of another bench process) uses. */
const runPrefix = () => `${process.pid}-${Date.now().toString(36)}-${++runs}-`;

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
  generator: 'wrk' | 'autocannon';
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
  return {
    p50: percentile(a, 50),
    p90: percentile(a, 90),
    p99: percentile(a, 99),
    max: a.length ? a[a.length - 1]! : NaN,
    mean: a.length ? sum / a.length : NaN,
    n: a.length,
  };
}

function run(
  o: LoadOptions,
  durationSec: number,
  onResponse?: (status: number, ms: number) => void,
): Promise<{ result: Awaited<ReturnType<typeof autocannon>>; startedAt: number; endedAt: number }> {
  const startedAt = Date.now();
  const inst = autocannon({
    url: o.url,
    method: o.method ?? 'POST',
    headers: o.distinctHeader ? { ...o.headers, [o.distinctHeader]: `${runPrefix()}[<id>]` } : o.headers,
    idReplacement: !!o.distinctHeader,
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
  if (o.overallRate === undefined && closedLoopGenerator() === 'wrk') return loadWithWrk(o);
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
    generator: 'autocannon',
  };
}

async function loadWithWrk(o: LoadOptions): Promise<LoadResult> {
  const counter = () => (o.distinctHeader ? { name: o.distinctHeader, prefix: runPrefix() } : undefined);
  if (o.warmupSec > 0) await runWrk({ ...o, durationSec: o.warmupSec, counterHeader: counter() });
  const startedAt = Date.now();
  const r = await runWrk({ ...o, counterHeader: counter() });
  const endedAt = Date.now();
  return {
    connections: o.connections,
    durationSec: r.durationSec,
    requests: r.requests,
    ok: r.ok,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: { '2xx': r.ok, ...(r.non2xx ? { '4xx/5xx': r.non2xx } : {}) },
    rps: r.ok / r.durationSec,
    p50: r.p50,
    p90: r.p90,
    p99: r.p99,
    max: r.max,
    mean: r.mean,
    startedAt,
    endedAt,
    generator: 'wrk',
  };
}
