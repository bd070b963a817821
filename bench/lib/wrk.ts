/**
 * The load generator in C: Debian's `wrk` (one thread), used whenever the machine has it, so that
 * the generator does not eat the cores it measures (autocannon, in Node, needs most of a core to
 * keep 64 connections busy). The bench installs it when it can (`apt-get install -y wrk` as root)
 * and falls back to autocannon otherwise; the report says which one ran.
 *
 * wrk has no open-loop rate: scenarios that need a fixed request rate keep using autocannon.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let available: boolean | undefined;

/** True when `wrk` can be used (installing it first when we are root and apt-get is there). */
export function wrkAvailable(): boolean {
  if (available !== undefined) return available;
  const has = () => {
    try {
      execFileSync('wrk', ['--version'], { stdio: 'ignore' });
      return true;
    } catch (err) {
      // wrk --version exits 1 after printing its version; only a missing binary is ENOENT.
      return (err as NodeJS.ErrnoException).code !== 'ENOENT';
    }
  };
  if (!has() && process.getuid?.() === 0 && !process.env.HCM_BENCH_NO_INSTALL) {
    try {
      execFileSync(
        'bash',
        ['-c', 'apt-get install -y wrk >/dev/null 2>&1 || (apt-get update >/dev/null 2>&1 && apt-get install -y wrk >/dev/null 2>&1)'],
        { stdio: 'ignore', timeout: 180_000 },
      );
    } catch {
      // autocannon it is
    }
  }
  available = has();
  return available;
}

export interface WrkRun {
  requests: number;
  /** Answers with a status below 400. */
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSec: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

const SCRIPT = `
wrk.method = os.getenv("WRK_METHOD") or "POST"
local body = os.getenv("WRK_BODY")
if body and #body > 0 then wrk.body = body end
local headers = os.getenv("WRK_HEADERS")
if headers then
  for k, v in string.gmatch(headers, "([^\\n:]+):([^\\n]*)") do wrk.headers[k] = v end
end
-- A header whose value differs on every request (prefix .. counter): distinct idempotency keys.
local counterHeader = os.getenv("WRK_COUNTER_HEADER")
if counterHeader and #counterHeader > 0 then
  local prefix = os.getenv("WRK_COUNTER_PREFIX") or ""
  local n = 0
  function request()
    n = n + 1
    wrk.headers[counterHeader] = prefix .. n
    return wrk.format()
  end
end
function done(summary, latency, requests)
  local e = summary.errors
  io.stderr:write(string.format(
    'WRK_RESULT {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`;

let scriptPath: string | undefined;

/** One wrk run: `connections` connections on one thread for `durationSec`; latencies in ms. */
export function runWrk(o: {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationSec: number;
  /** Set this header to a value unique to the request (within this wrk run). */
  counterHeader?: { name: string; prefix: string };
}): Promise<WrkRun> {
  scriptPath ??= (() => {
    const p = join(mkdtempSync(join(tmpdir(), 'hcm-wrk-')), 'bench.lua');
    writeFileSync(p, SCRIPT);
    return p;
  })();
  const env = {
    ...process.env,
    WRK_METHOD: o.method ?? 'POST',
    WRK_BODY: o.body ?? '',
    WRK_HEADERS: Object.entries(o.headers ?? {})
      .map(([k, v]) => `${k}:${v}`)
      .join('\n'),
    WRK_COUNTER_HEADER: o.counterHeader?.name ?? '',
    WRK_COUNTER_PREFIX: o.counterHeader?.prefix ?? '',
  };
  const args = [
    '-t1',
    `-c${Math.max(1, o.connections)}`,
    `-d${Math.max(1, Math.round(o.durationSec))}s`,
    '--timeout',
    '30s',
    '-s',
    scriptPath,
    o.url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, { env });
    let err = '';
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const m = /WRK_RESULT (\{.*\})/.exec(err);
      if (!m) return reject(new Error(`wrk exited ${code} without a result:\n${out}\n${err}`));
      const r = JSON.parse(m[1]!) as Record<string, number>;
      const durationSec = r.durationUs! / 1e6;
      const errors = r.connect! + r.read! + r.write!;
      const ms = (us: number) => us / 1000;
      resolve({
        requests: r.requests!,
        ok: r.requests! - r.status!,
        non2xx: r.status!,
        errors,
        timeouts: r.timeout!,
        durationSec,
        p50: ms(r.p50!),
        p90: ms(r.p90!),
        p99: ms(r.p99!),
        max: ms(r.max!),
        mean: ms(r.mean!),
      });
    });
  });
}
