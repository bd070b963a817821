/**
 * `npm run bench` — measures the runner on this machine and writes docs/benchmarks.md.
 *
 *   npm run bench                      # every scenario, 10 s each (+3 s warm-up), writes docs/benchmarks.md
 *   npm run bench -- --quick           # 2 s each (+1 s warm-up): a smoke run
 *   npm run bench -- --only intake,sync --out -     # some scenarios, print instead of writing
 *   npm run bench -- --only intake --profile /tmp/prof   # runner processes write .cpuprofile files there
 *
 * Scenarios (--only takes a comma-separated list): intake, e2e, sync, reload, load1000, schedule, pg,
 * foreach (a sync webhook whose forEach group runs 100 items × 2 steps — core.transform, then an
 * HCM GET against the sandbox — at `concurrency: 1` and `concurrency: 10`: executions/s, items/s,
 * runner CPU per item), idempotent-intake (async intake with an `idempotencyKey` read from a header
 * the load generator makes distinct per request, against the same integration without a key, both
 * with workers paused: what the key claim costs; SQLite, then PostgreSQL unless --no-pg), tracing
 * (the e2e closed loop, SQLite, in a fresh runner with tracing off and one with tracing on — spans
 * exported over OTLP/HTTP to a minimal receiver in this process: executions/s, runner CPU per
 * execution, the difference, and the export requests/bytes received), durable (an async webhook
 * whose first step writes — a checkpoint after it — and whose second reads, offered faster than it
 * runs: executions/s; with `--baseline DIR` alternated with another checkout's build), waits
 * (1,000 executions waiting 1 s among 10,000 waiting an hour: wake-up lag p50/p99, executions/s;
 * SQLite, then PostgreSQL unless --no-pg), keyed-queue (PostgreSQL's claim with 10 000 queued
 * executions over 1 000 `concurrency:` keys, against the same rows without keys: claim latency
 * p50/p99; bench/lib/keyed-queue.ts).
 *
 * Flags: --duration S, --warmup S, --connections N, --rounds N (intake/sync: alternate bare and
 * runner N times, keep the median; idempotent-intake, tracing: alternate which variant goes first),
 * --baseline DIR (durable: a checkout to compare with, built and run by this bench's own targets),
 * --database-url URL (PostgreSQL scenarios; default: the URL
 * printed by scripts/ensure-postgres.sh for database hcm_bench), --no-pg, --json FILE.
 *
 * Every server under test runs in its own process (bench/targets/*); the load generator is
 * Debian's wrk when the machine has it (installed on demand as root), else autocannon in this
 * process: on a 2-core machine one core each.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, freemem, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  e2eYaml,
  foreachYaml,
  generatedYaml,
  idempotentIntakeYaml,
  intakeYaml,
  waitYaml,
  writeThenReadYaml,
  reloadYaml,
  scheduleYaml,
  syncYaml,
  writeIntegrations,
} from './lib/integrations.js';
import { type KeyedQueueResult, KEYED_QUEUE, keyedQueueScenario } from './lib/keyed-queue.js';
import { closedLoopGenerator, load, summarize, type LoadResult } from './lib/load.js';
import { machineCpu } from './lib/machine-cpu.js';
import { buildProduct, productNodeFlags } from './lib/product.js';
import { repoRoot, startChild, type Child } from './lib/proc.js';
import type { RunnerConfig } from './targets/runner.js';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    rounds: { type: 'string' },
    only: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'string' },
    profile: { type: 'string' },
    'database-url': { type: 'string' },
    baseline: { type: 'string' },
    'no-pg': { type: 'boolean' },
  },
});

const ALL = [
  'intake',
  'e2e',
  'sync',
  'reload',
  'load1000',
  'schedule',
  'pg',
  'foreach',
  'idempotent-intake',
  'tracing',
  'durable',
  'waits',
  'keyed-queue',
] as const;
type Scenario = (typeof ALL)[number];
const only = new Set<Scenario>((flags.only ? flags.only.split(',') : ALL).map((s) => s.trim() as Scenario));
for (const s of only) if (!ALL.includes(s)) throw new Error(`unknown scenario ${s}; known: ${ALL.join(', ')}`);
if (flags['no-pg']) {
  only.delete('pg');
  only.delete('keyed-queue');
}

const QUICK = !!flags.quick;
const DURATION = Number(flags.duration ?? (QUICK ? 2 : 10));
const WARMUP = Number(flags.warmup ?? (QUICK ? 1 : 3));
const CONNECTIONS = Number(flags.connections ?? 64);
const ROUNDS = Number(flags.rounds ?? 1);
const RELOAD_EDITS = QUICK ? 10 : 50;
const SCHEDULE_TICKS = QUICK ? 5 : 20;
/** foreach: items per execution, the group's `concurrency` values compared. */
const FOREACH_ITEMS = 100;
const FOREACH_CONCURRENCY = [1, 10] as const;
/**
 * foreach: closed-loop connections. One execution is 100 HCM calls, so a few executions at once
 * already keep the runner busy; 64 at `concurrency: 10` would be 640 sandbox calls in flight.
 */
const FOREACH_CONNECTIONS = Math.min(CONNECTIONS, 8);
/** idempotent-intake: the header the load generator sets to a distinct value per request. */
const KEY_HEADER = 'x-bench-key';
const OUT = flags.out ?? join(repoRoot, 'docs', 'benchmarks.md');
/** durable: another checkout (with node_modules) whose build the scenario alternates with this one. */
const BASELINE = flags.baseline;
const profileArgs = flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${flags.profile}`] : [];

const tmp = mkdtempSync(join(tmpdir(), 'hcm-bench-'));
/** What the servers under test run (the compiled dist/, built now, unless BENCH_SOURCE=src). */
const CODE = buildProduct();
const BODY = JSON.stringify({
  event: 'worker.updated',
  source: 'bench',
  occurredAt: '2025-01-15T10:00:00.000Z',
  workerId: 'Employee_ID=21001',
  amount: 1200,
  changes: ['businessTitle', 'location'],
  comment: 'x'.repeat(120),
});
const JSON_HEADERS = { 'content-type': 'application/json' };
const loadOpts = (url: string, extra: Partial<Parameters<typeof load>[0]> = {}) => ({
  url,
  method: 'POST',
  headers: JSON_HEADERS,
  body: BODY,
  connections: CONNECTIONS,
  durationSec: DURATION,
  warmupSec: WARMUP,
  ...extra,
});

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
const pct = (x: number) => `${Math.round(x * 100)} %`;
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '–');
const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US').replace(/,/g, ' ') : '–');
const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MB`;

/** `processEnv`: variables of the runner's process itself (besides `cfg.env`, what startServer reads). */
function runner(name: string, cfg: Partial<RunnerConfig> & { dir: string }, processEnv?: Record<string, string>): Promise<Child<RunnerReady>> {
  const dataDir = cfg.databaseUrl ? undefined : (cfg.dataDir ?? mkdtempSync(join(tmp, `data-${name}-`)));
  return startChild<RunnerReady>('runner', { logLevel: 'info', ...cfg, dataDir }, { nodeArgs: ['--expose-gc', ...profileArgs], env: processEnv });
}
interface RunnerReady {
  url: string;
  adminToken: string;
  webhooks: Record<string, { live: string; test: string }>;
  startMs: number;
  integrations: number;
  storeKind: string;
}
interface Timings {
  counts: Record<string, number>;
  rows: Array<[number, number | null, number | null]>;
}

const median = <T>(xs: T[], key: (x: T) => number): T => [...xs].sort((a, b) => key(a) - key(b))[Math.floor((xs.length - 1) / 2)]!;

// --- scenarios ---------------------------------------------------------------------------------

interface IntakeResult {
  /** Bare Hono, c.req.json(). */
  bare: LoadResult;
  /** Bare Hono, body read from the Node request + JSON.parse. */
  bareRaw: LoadResult;
  runner: LoadResult;
  runnerWorking?: LoadResult;
  recorded: number;
  store: string;
  /** Store write counters after the run (SQLite: commits, enqueue calls). */
  stats?: Record<string, number>;
  /** Runner CPU time (user + system) per accepted request over warm-up + measurement, µs. */
  cpuPerRequestUs: number;
}

/** Async intake, durable: the runner with workers paused (intake alone) vs a bare Hono server. */
async function intake(opts: { databaseUrl?: string; withWorkers?: boolean } = {}): Promise<IntakeResult> {
  const dir = writeIntegrations(join(tmp, `intake-${opts.databaseUrl ? 'pg' : 'sqlite'}`), { 'intake.yaml': intakeYaml('bench-intake') });
  const bares: LoadResult[] = [];
  const bareRaws: LoadResult[] = [];
  const runners: LoadResult[] = [];
  let recorded = 0;
  let store = '';
  let stats: Record<string, number> | undefined;
  let cpuPerRequestUs = NaN;
  for (let round = 0; round < ROUNDS; round++) {
    const bare = await startChild<{ webhookUrl: string; rawUrl: string }>('bare', {});
    log(`intake: bare Hono (round ${round + 1})`);
    bares.push(await load(loadOpts(bare.ready.webhookUrl)));
    bareRaws.push(await load(loadOpts(bare.ready.rawUrl)));
    await bare.stop();
    // concurrency 0: nothing runs, every accepted request stays a durable `queued` row.
    const r = await runner('intake', { dir, databaseUrl: opts.databaseUrl, limits: { concurrency: 0, backlog: 1e9 } });
    store = r.ready.storeKind;
    log(`intake: runner, ${store} (round ${round + 1})`);
    const cpu0 = await r.call<number>('cpu');
    const res = await load(loadOpts(r.ready.webhooks['bench-intake']!.live));
    const cpu1 = await r.call<number>('cpu');
    runners.push(res);
    const t = await r.call<Timings>('timings', { integration: 'bench-intake' });
    recorded = t.counts.queued ?? 0;
    cpuPerRequestUs = (cpu1 - cpu0) / recorded;
    stats = await r.call<Record<string, number>>('stats');
    await r.stop();
  }
  const result: IntakeResult = {
    bare: median(bares, (x) => x.rps),
    bareRaw: median(bareRaws, (x) => x.rps),
    runner: median(runners, (x) => x.rps),
    recorded,
    store,
    stats,
    cpuPerRequestUs,
  };
  if (opts.withWorkers) {
    const r = await runner('intake-work', { dir, databaseUrl: opts.databaseUrl, limits: { backlog: 1e9 } });
    log('intake: runner with workers on (default concurrency)');
    result.runnerWorking = await load(loadOpts(r.ready.webhooks['bench-intake']!.live));
    await r.stop();
  }
  return result;
}

interface E2EResult {
  limits: { concurrency: number; perIntegration: number };
  sync: LoadResult;
  async?: {
    targetRate: number;
    sent: LoadResult;
    executions: number;
    failed: number;
    ratePerSec: number;
    p50: number;
    p99: number;
    max: number;
    leftUnfinished: number;
  };
  store: string;
  /** Runner CPU time per execution in the closed loop (warm-up + measurement), µs. */
  cpuPerExecutionUs: number;
  /** PostgreSQL statements per execution in the closed loop (PostgreSQL only). */
  queriesPerExecution?: number;
  /** Store commits per execution in the closed loop: how well group commit batches. */
  commitsPerExecution?: number;
  /**
   * What one execution of the closed loop costs the machine, µs of CPU: the HCM sandbox's process,
   * and every process together (runner, sandbox, load generator, anything else running); `idle` is
   * the share of the cores' time left unused.
   */
  machine?: { sandboxUs: number; allUs: number; cores: number; idle: number; runnerMainUs?: number };
}

type Sandbox = Child<{ apiUrl: string; tokenUrl: string; authorizeUrl: string; refreshToken: string }>;

/** The HCM sandbox in its own process. */
const startSandbox = (): Promise<Sandbox> => startChild('sandbox', {}, { nodeArgs: profileArgs });

/** The environment the HCM connection of the bench integrations reads (HCM_CONNECTION). */
const hcmEnv = (sandbox: Sandbox): Record<string, string> => ({
  HCM_API_URL: sandbox.ready.apiUrl,
  HCM_TOKEN_URL: sandbox.ready.tokenUrl,
  HCM_AUTHORIZE_URL: sandbox.ready.authorizeUrl,
  HCM_CLIENT_ID: 'sandbox-client',
  HCM_CLIENT_SECRET: 'sandbox-secret',
  HCM_REFRESH_TOKEN: sandbox.ready.refreshToken,
});

/** The runner limits of the e2e closed loop: the defaults (16/4) would cap one integration at 4 runs at once. */
const e2eLimits = () => ({ concurrency: CONNECTIONS, perIntegration: CONNECTIONS, backlog: 1e6 });

/** One sync call before the load: the OAuth refresh happens once, then the access token is cached. */
async function e2eFirstCall(label: string, url: string): Promise<void> {
  const first = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: BODY });
  const firstBody = await first.text();
  if (first.status !== 200) throw new Error(`${label}: the first sync call answered ${first.status}: ${firstBody}`);
}

/** webhook → core.transform → HCM GET against the sandbox (its own process). */
async function e2e(opts: { databaseUrl?: string } = {}): Promise<E2EResult> {
  const dir = writeIntegrations(join(tmp, `e2e-${opts.databaseUrl ? 'pg' : 'sqlite'}`), {
    'sync.yaml': e2eYaml('bench-e2e-sync', 'sync'),
    'async.yaml': e2eYaml('bench-e2e-async', 'async'),
  });
  const sandbox = await startSandbox();
  const limits = e2eLimits();
  const r = await runner('e2e', { dir, databaseUrl: opts.databaseUrl, limits, env: hcmEnv(sandbox) });
  try {
    const syncUrl = r.ready.webhooks['bench-e2e-sync']!.live;
    await e2eFirstCall('e2e', syncUrl);
    log(`e2e (${r.ready.storeKind}): closed loop, sync mode, ${CONNECTIONS} connections`);
    const q0 = await r.call<number>('pgQueries');
    const c0 = (await r.call<Record<string, number>>('stats')).commits;
    const cpu0 = await r.call<number>('cpu');
    const main0 = await r.call<number | null>('mainThreadCpu');
    const sb0 = await sandbox.call<number>('cpu');
    const m0 = machineCpu();
    const sync = await load(loadOpts(syncUrl));
    const m1 = machineCpu();
    const sb1 = await sandbox.call<number>('cpu');
    const main1 = await r.call<number | null>('mainThreadCpu');
    const cpu1 = await r.call<number>('cpu');
    const q1 = await r.call<number>('pgQueries');
    const c1 = (await r.call<Record<string, number>>('stats')).commits;
    const syncRuns = await r.call<Timings>('timings', { integration: 'bench-e2e-sync' });
    const n = syncRuns.rows.length - 1;
    const result: E2EResult = {
      limits,
      sync,
      store: r.ready.storeKind,
      cpuPerExecutionUs: (cpu1 - cpu0) / n,
      queriesPerExecution: opts.databaseUrl ? (q1 - q0) / n : undefined,
    };
    if (c0 !== undefined && c1 !== undefined) result.commitsPerExecution = (c1 - c0) / n;
    result.machine = {
      sandboxUs: (sb1 - sb0) / n,
      allUs: (m1.busyUs - m0.busyUs) / n,
      cores: cpus().length,
      idle: 1 - (m1.busyUs - m0.busyUs) / (m1.totalUs - m0.totalUs),
      runnerMainUs: main0 !== null && main1 !== null ? (main1 - main0) / n : undefined,
    };

    // Open loop at ~80 % of the closed-loop rate, async mode: latency from the stored records.
    const targetRate = Math.max(50, Math.floor(sync.rps * 0.8));
    log(`e2e (${r.ready.storeKind}): open loop, async mode, ${targetRate}/s`);
    const sent = await load(loadOpts(r.ready.webhooks['bench-e2e-async']!.live, { overallRate: targetRate }));
    // Let the queue drain (bounded), then read the records.
    let t: Timings;
    const deadline = Date.now() + 30_000;
    for (;;) {
      t = await r.call<Timings>('timings', { integration: 'bench-e2e-async' });
      if ((t.counts.queued ?? 0) + (t.counts.running ?? 0) === 0 || Date.now() > deadline) break;
      await sleep(200);
    }
    const inWindow = t.rows.filter(([q]) => q >= sent.startedAt && q <= sent.endedAt);
    const done = inWindow.filter(([, , f]) => f !== null) as Array<[number, number, number]>;
    const finishedInWindow = t.rows.filter(([, , f]) => f !== null && f >= sent.startedAt && f <= sent.endedAt).length;
    const lat = summarize(done.map(([q, , f]) => f - q));
    result.async = {
      targetRate,
      sent,
      executions: inWindow.length,
      failed: t.counts.failed ?? 0,
      ratePerSec: finishedInWindow / ((sent.endedAt - sent.startedAt) / 1000),
      p50: lat.p50,
      p99: lat.p99,
      max: lat.max,
      leftUnfinished: inWindow.length - done.length,
    };
    return result;
  } finally {
    await r.stop();
    await sandbox.stop();
  }
}

interface SyncResult {
  bare: LoadResult;
  runner: LoadResult;
  /** Runner CPU per sync request, µs. */
  cpuPerRequestUs: number;
  /** PostgreSQL statements per sync request (PostgreSQL only). */
  queriesPerRequest?: number;
}

/** Sync webhook with a trivial core.transform vs bare Hono, one connection: per-request overhead. */
async function syncOverhead(opts: { databaseUrl?: string } = {}): Promise<SyncResult> {
  const dir = writeIntegrations(join(tmp, `sync-${opts.databaseUrl ? 'pg' : 'sqlite'}`), { 'sync.yaml': syncYaml('bench-sync') });
  const bares: LoadResult[] = [];
  const runners: LoadResult[] = [];
  const cpus: number[] = [];
  const queries: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const bare = await startChild<{ rawUrl: string }>('bare', {});
    log(`sync: bare Hono, 1 connection (round ${round + 1})`);
    bares.push(await load(loadOpts(bare.ready.rawUrl, { connections: 1 })));
    await bare.stop();
    const r = await runner('sync', { dir, databaseUrl: opts.databaseUrl });
    log(`sync: runner, ${r.ready.storeKind}, 1 connection (round ${round + 1})`);
    const q0 = await r.call<number>('pgQueries');
    const cpu0 = await r.call<number>('cpu');
    runners.push(await load(loadOpts(r.ready.webhooks['bench-sync']!.live, { connections: 1 })));
    const cpu1 = await r.call<number>('cpu');
    const q1 = await r.call<number>('pgQueries');
    const runs = await r.call<Timings>('timings', { integration: 'bench-sync' });
    cpus.push((cpu1 - cpu0) / runs.rows.length);
    queries.push((q1 - q0) / runs.rows.length);
    await r.stop();
  }
  return {
    bare: median(bares, (x) => x.p50),
    runner: median(runners, (x) => x.p50),
    cpuPerRequestUs: median(cpus, (x) => x),
    queriesPerRequest: opts.databaseUrl ? median(queries, (x) => x) : undefined,
  };
}

interface ReloadResult {
  mode: 'watcher' | 'api';
  edits: number;
  folderSize: number;
  p50: number;
  p99: number;
  max: number;
  apiP50?: number;
  apiP99?: number;
}

/** File write → new behaviour live, over N edits. */
async function reload(): Promise<ReloadResult> {
  const dir = join(tmp, 'reload');
  const files: Record<string, string> = { 'reload.yaml': reloadYaml('bench-reload', 0) };
  for (let i = 0; i < 20; i++) files[`filler-${i}.yaml`] = generatedYaml(i);
  writeIntegrations(dir, files);
  const r = await runner('reload', {
    dir,
    env: {
      HCM_CLIENT_SECRET: 'x',
      HCM_REFRESH_TOKEN: 'x',
      HCM_API_URL: 'http://127.0.0.1:9',
      HCM_TOKEN_URL: 'http://127.0.0.1:9',
      HCM_AUTHORIZE_URL: 'http://127.0.0.1:9',
      HCM_CLIENT_ID: 'x',
    },
  });
  const url = r.ready.webhooks['bench-reload']!.live;
  const version = async () => ((await (await fetch(url, { method: 'POST' })).json()) as { version?: number }).version;
  const apiReload = async () => {
    const t = performance.now();
    const res = await fetch(`${r.ready.url}/api/reload`, { method: 'POST', headers: { authorization: `Bearer ${r.ready.adminToken}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`POST /api/reload answered ${res.status}`);
    return performance.now() - t;
  };
  const waitFor = async (v: number, timeoutMs: number) => {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if ((await version()) === v) return true;
      await sleep(2);
    }
    return false;
  };
  try {
    if ((await version()) !== 0) throw new Error('reload: unexpected initial answer');
    // Is there a file watcher? Edit once and wait without calling the API.
    await sleep(200);
    writeFileSync(join(dir, 'reload.yaml'), reloadYaml('bench-reload', 1));
    const mode: ReloadResult['mode'] = (await waitFor(1, 3000)) ? 'watcher' : 'api';
    if (mode === 'api') {
      await apiReload();
      if (!(await waitFor(1, 3000))) throw new Error('reload: POST /api/reload did not apply the edit');
    }
    log(`reload: ${mode === 'watcher' ? 'file watcher detected' : 'no file watcher; measuring POST /api/reload'}, ${RELOAD_EDITS} edits`);
    const times: number[] = [];
    const api: number[] = [];
    for (let i = 2; i < RELOAD_EDITS + 2; i++) {
      await sleep(mode === 'watcher' ? 150 : 20); // let a watcher's debounce settle between edits
      const t0 = performance.now();
      writeFileSync(join(dir, 'reload.yaml'), reloadYaml('bench-reload', i));
      if (mode === 'api') api.push(await apiReload());
      if (!(await waitFor(i, 5000))) throw new Error(`reload: edit ${i} not live after 5 s`);
      times.push(performance.now() - t0);
    }
    const s = summarize(times);
    const a = summarize(api);
    return {
      mode,
      edits: times.length,
      folderSize: Object.keys(files).length,
      p50: s.p50,
      p99: s.p99,
      max: s.max,
      apiP50: a.n ? a.p50 : undefined,
      apiP99: a.n ? a.p99 : undefined,
    };
  } finally {
    await r.stop();
  }
}

interface ManyResult {
  count: number;
  serverStartMs: number;
  serverRss: number;
  serverHeap: number;
  baselineStartMs: number;
  baselineRss: number;
  loadFilesMs: number;
  loadFilesRss: number;
  loadFilesOk: number;
}

/** 1 000 generated integrations: startServer on the folder, and loadFiles in a fresh process. */
async function many(): Promise<ManyResult> {
  const count = 1000;
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) files[`generated-${String(i).padStart(4, '0')}.yaml`] = generatedYaml(i);
  const dir = writeIntegrations(join(tmp, 'many'), files);
  const empty = writeIntegrations(join(tmp, 'empty'), {});
  const env = {
    HCM_CLIENT_SECRET: 'x',
    HCM_REFRESH_TOKEN: 'x',
    HCM_API_URL: 'http://127.0.0.1:9',
    HCM_TOKEN_URL: 'http://127.0.0.1:9',
    HCM_AUTHORIZE_URL: 'http://127.0.0.1:9',
    HCM_CLIENT_ID: 'x',
  };

  log('load1000: startServer on an empty folder (baseline)');
  const base = await runner('empty', { dir: empty, env });
  const baseMem = await base.call<NodeJS.MemoryUsage>('memory');
  await base.stop();

  log(`load1000: startServer on ${count} integrations`);
  const r = await runner('many', { dir, env });
  if (r.ready.integrations !== count) throw new Error(`load1000: ${r.ready.integrations} integrations loaded, expected ${count}`);
  const mem = await r.call<NodeJS.MemoryUsage>('memory');
  await r.stop();

  log(`load1000: loadFiles in a fresh process`);
  const lf = await startChild<{ ms: number; ok: number; memory: NodeJS.MemoryUsage }>('load-files', { dir });
  await lf.stop();
  if (lf.ready.ok !== count) throw new Error(`load1000: loadFiles compiled ${lf.ready.ok} of ${count}`);
  return {
    count,
    serverStartMs: r.ready.startMs,
    serverRss: mem.rss,
    serverHeap: mem.heapUsed,
    baselineStartMs: base.ready.startMs,
    baselineRss: baseMem.rss,
    loadFilesMs: lf.ready.ms,
    loadFilesRss: lf.ready.memory.rss,
    loadFilesOk: lf.ready.ok,
  };
}

type ScheduleResult =
  | { status: 'pending'; reason: string }
  | { status: 'measured'; ticks: number; p50: number; p99: number; max: number; min: number };

/** `every: 1s`: firedAt − scheduledAt over ~20 ticks (needs the schedule loop). */
async function schedule(): Promise<ScheduleResult> {
  const dir = writeIntegrations(join(tmp, 'schedule'), { 'tick.yaml': scheduleYaml('bench-tick') });
  const r = await runner('schedule', { dir });
  try {
    await sleep(3500);
    const first = await r.call<Array<{ trigger: any }>>('triggers', { integration: 'bench-tick' });
    if (first.length === 0) return { status: 'pending', reason: 'no schedule execution after 3.5 s: the schedule loop is not in this build yet' };
    log(`schedule: waiting for ${SCHEDULE_TICKS} ticks`);
    const deadline = Date.now() + (SCHEDULE_TICKS + 10) * 1000;
    let rows = first;
    while (rows.length < SCHEDULE_TICKS + 2 && Date.now() < deadline) {
      await sleep(500);
      rows = await r.call<Array<{ trigger: any }>>('triggers', { integration: 'bench-tick' });
    }
    const jitter = rows
      .map((x) => Date.parse(x.trigger?.firedAt) - Date.parse(x.trigger?.scheduledAt))
      .filter((x) => Number.isFinite(x))
      .slice(1); // the first tick may race the start
    if (jitter.length === 0) return { status: 'pending', reason: 'executions have no $trigger.scheduledAt / firedAt' };
    const s = summarize(jitter);
    return { status: 'measured', ticks: s.n, p50: s.p50, p99: s.p99, max: s.max, min: Math.min(...jitter) };
  } finally {
    await r.stop();
  }
}

interface ForEachRun {
  /** The group's `concurrency`. */
  concurrency: number;
  /** Closed loop, sync mode: one answer = one execution of FOREACH_ITEMS items. */
  load: LoadResult;
  /** Executions recorded over warm-up and measurement (the first call excluded). */
  executions: number;
  failed: number;
  itemsPerSec: number;
  /** Runner CPU (user + system) over warm-up + measurement, per item and per execution, µs. */
  cpuPerItemUs: number;
  cpuPerExecutionUs: number;
  /** The HCM sandbox's CPU per item (its one GET), µs. */
  sandboxPerItemUs: number;
}

interface ForEachResult {
  items: number;
  connections: number;
  store: string;
  runs: ForEachRun[];
}

/** Polls until the integration's recorded executions stop growing (the loop's tail finishing). */
async function settled(r: Child<RunnerReady>, integration: string): Promise<Timings> {
  let last = -1;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const t = await r.call<Timings>('timings', { integration });
    const running = (t.counts.queued ?? 0) + (t.counts.running ?? 0);
    if ((t.rows.length === last && running === 0) || Date.now() > deadline) return t;
    last = t.rows.length;
    await sleep(300);
  }
}

/** Sync webhook → forEach group of FOREACH_ITEMS items × 2 steps (the 2nd an HCM GET), per `concurrency`. */
async function forEachScenario(): Promise<ForEachResult> {
  const name = (c: number) => `bench-foreach-c${c}`;
  const files: Record<string, string> = {};
  for (const c of FOREACH_CONCURRENCY) files[`${name(c)}.yaml`] = foreachYaml(name(c), FOREACH_ITEMS, c);
  const dir = writeIntegrations(join(tmp, 'foreach'), files);
  const sandbox = await startSandbox();
  const limits = { concurrency: FOREACH_CONNECTIONS, perIntegration: FOREACH_CONNECTIONS, backlog: 1e6 };
  const r = await runner('foreach', { dir, limits, env: hcmEnv(sandbox) });
  try {
    const runs: ForEachRun[] = [];
    for (const c of FOREACH_CONCURRENCY) {
      const url = r.ready.webhooks[name(c)]!.live;
      // One call first: it proves the loop runs every item (and the OAuth refresh happens once).
      const first = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: BODY });
      const firstBody = await first.text();
      if (first.status !== 200 || (JSON.parse(firstBody) as { items?: number }).items !== FOREACH_ITEMS)
        throw new Error(`foreach: the first call answered ${first.status}: ${firstBody.slice(0, 500)}`);
      log(`foreach (${r.ready.storeKind}): ${FOREACH_ITEMS} items × 2 steps, concurrency ${c}, ${FOREACH_CONNECTIONS} connections`);
      const before = await settled(r, name(c));
      const cpu0 = await r.call<number>('cpu');
      const sb0 = await sandbox.call<number>('cpu');
      const res = await load(loadOpts(url, { connections: FOREACH_CONNECTIONS }));
      // The executions still running when the generator stopped count too: wait for them.
      const t = await settled(r, name(c));
      const sb1 = await sandbox.call<number>('cpu');
      const cpu1 = await r.call<number>('cpu');
      const n = t.rows.length - before.rows.length;
      const items = n * FOREACH_ITEMS;
      runs.push({
        concurrency: c,
        load: res,
        executions: n,
        failed: t.counts.failed ?? 0,
        itemsPerSec: res.rps * FOREACH_ITEMS,
        cpuPerItemUs: (cpu1 - cpu0) / items,
        cpuPerExecutionUs: (cpu1 - cpu0) / n,
        sandboxPerItemUs: (sb1 - sb0) / items,
      });
    }
    return { items: FOREACH_ITEMS, connections: FOREACH_CONNECTIONS, store: r.ready.storeKind, runs };
  } finally {
    await r.stop();
    await sandbox.stop();
  }
}

interface IdempotentVariant {
  load: LoadResult;
  /** `queued` rows after the run (warm-up and measurement). */
  recorded: number;
  /** Runner CPU per accepted request over warm-up + measurement, µs. */
  cpuPerRequestUs: number;
}

interface IdempotentStoreResult {
  store: string;
  /** The intake integration without a key. */
  plain: IdempotentVariant;
  /** The same with `idempotencyKey` from KEY_HEADER: one key claimed per request. */
  keyed: IdempotentVariant;
}

interface IdempotentResult {
  sqlite: IdempotentStoreResult;
  pg?: IdempotentStoreResult | { skipped: string };
}

/** The keyed integration must deduplicate a repeated key, or the run would measure nothing. */
async function checkReplay(url: string): Promise<void> {
  const send = () => fetch(url, { method: 'POST', headers: { ...JSON_HEADERS, [KEY_HEADER]: 'bench-replay-check' }, body: BODY });
  const a = await send();
  const aBody = await a.text();
  const b = await send();
  const bBody = await b.text();
  if (a.status !== 200 || b.status !== 200 || b.headers.get('x-idempotent-replay') !== 'true' || aBody !== bBody)
    throw new Error(`idempotent-intake: a repeated key was not answered as a replay (${a.status} ${aBody} / ${b.status} ${bBody})`);
}

/**
 * Async intake, workers paused, with and without an idempotency key: each variant in a fresh
 * runner on an empty store, every request with a distinct KEY_HEADER (the plain integration
 * ignores it, so the generator's work is the same), alternating which goes first per round.
 */
async function idempotentIntakeOn(databaseUrl?: string): Promise<IdempotentStoreResult> {
  const dir = writeIntegrations(join(tmp, `idempotent-${databaseUrl ? 'pg' : 'sqlite'}`), {
    'plain.yaml': intakeYaml('bench-idem-plain'),
    'keyed.yaml': idempotentIntakeYaml('bench-idem-keyed', KEY_HEADER),
  });
  const variants = { plain: 'bench-idem-plain', keyed: 'bench-idem-keyed' } as const;
  const results: Record<keyof typeof variants, IdempotentVariant[]> = { plain: [], keyed: [] };
  let store = '';
  for (let round = 0; round < ROUNDS; round++) {
    const order: Array<keyof typeof variants> = round % 2 ? ['keyed', 'plain'] : ['plain', 'keyed'];
    for (const v of order) {
      if (databaseUrl) await resetPgDatabase(databaseUrl);
      const r = await runner(`idempotent-${v}`, { dir, databaseUrl, limits: { concurrency: 0, backlog: 1e9 } });
      try {
        store = r.ready.storeKind;
        const integration = variants[v];
        const url = r.ready.webhooks[integration]!.live;
        log(`idempotent-intake: ${v === 'keyed' ? 'with' : 'without'} idempotencyKey, ${store} (round ${round + 1})`);
        const cpu0 = await r.call<number>('cpu');
        const res = await load(loadOpts(url, { distinctHeader: KEY_HEADER }));
        const cpu1 = await r.call<number>('cpu');
        const recorded = (await r.call<Timings>('timings', { integration })).counts.queued ?? 0;
        // Distinct keys: every answered request of the measurement is a row of its own.
        if (recorded < res.ok) throw new Error(`idempotent-intake: ${recorded} rows for ${res.ok} answers: the keys were not distinct`);
        if (v === 'keyed') await checkReplay(url);
        results[v].push({ load: res, recorded, cpuPerRequestUs: (cpu1 - cpu0) / recorded });
      } finally {
        await r.stop();
      }
    }
  }
  return { store, plain: median(results.plain, (x) => x.load.rps), keyed: median(results.keyed, (x) => x.load.rps) };
}

async function idempotentIntake(): Promise<IdempotentResult> {
  const result: IdempotentResult = { sqlite: await idempotentIntakeOn() };
  if (flags['no-pg']) return result;
  let url: string;
  try {
    url = benchDatabaseUrl();
    if (!/\/hcm_bench(\?|$)/.test(url) && !flags['database-url']) throw new Error(`unexpected URL ${url}`);
    await resetPgDatabase(url);
  } catch (err) {
    result.pg = { skipped: `PostgreSQL not available: ${(err as Error).message.split('\n')[0]}` };
    return result;
  }
  result.pg = await idempotentIntakeOn(url);
  return result;
}

interface OtlpReceiver {
  url: string;
  /** Export requests (POST /v1/traces) and their body bytes received so far. */
  counts(): { requests: number; bytes: number };
  close(): Promise<void>;
}

/**
 * The smallest OTLP/HTTP traces endpoint: a loopback node:http server that answers 200 to
 * POST /v1/traces (an empty ExportTraceServiceResponse: an empty body in protobuf, `{}` in JSON)
 * and counts requests and bytes without keeping them; anything else is a 404.
 */
async function startOtlpReceiver(): Promise<OtlpReceiver> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/traces') {
      req.resume();
      res.writeHead(404).end();
      return;
    }
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
    });
    req.on('end', () => {
      // Counted before the answer: once the exporter has its 200, the counts include its batch.
      requests++;
      bytes += size;
      const json = (req.headers['content-type'] ?? '').includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
    req.on('error', () => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    counts: () => ({ requests, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface TracingRun {
  tracing: 'off' | 'on';
  load: LoadResult;
  /** Executions recorded in the closed loop (warm-up + measurement; the first call excluded). */
  executions: number;
  /** Runner CPU time per execution over warm-up + measurement, µs. */
  cpuPerExecutionUs: number;
  /** Export requests/bytes the receiver got while the load ran, and in all (the flush at shutdown included). */
  exportDuringLoad: { requests: number; bytes: number };
  exportTotal: { requests: number; bytes: number };
}

interface TracingResult {
  store: string;
  limits: { concurrency: number; perIntegration: number };
  rounds: number;
  /** Per variant, the round with the median executions/s. */
  off: TracingRun;
  on: TracingRun;
  /** Medians over the rounds of each variant's runner CPU per execution, µs. */
  offCpuUs: number;
  onCpuUs: number;
  /** Median over the rounds of (on − off) runner CPU per execution within a round, µs. */
  costPerExecutionUs: number;
  runs: TracingRun[];
}

/**
 * The e2e closed loop (sync mode, SQLite) in a fresh runner with tracing off, then one with tracing
 * on (OTLP/HTTP, protobuf, the SDK's default batching) exporting to a receiver in this process;
 * which goes first alternates per round. Off sets OTEL_SDK_DISABLED=true so OTEL_* variables of the
 * shell running the bench cannot turn it on; on sets the endpoint (and names otlp, in case the shell
 * says OTEL_TRACES_EXPORTER=none).
 */
async function tracingScenario(): Promise<TracingResult> {
  const integration = 'bench-tracing-sync';
  const dir = writeIntegrations(join(tmp, 'tracing'), { 'sync.yaml': e2eYaml(integration, 'sync') });
  const receiver = await startOtlpReceiver();
  const sandbox = await startSandbox();
  const limits = e2eLimits();
  const env: Record<'off' | 'on', Record<string, string>> = {
    off: { OTEL_SDK_DISABLED: 'true' },
    on: { OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.url },
  };
  const runs: TracingRun[] = [];
  const diffs: number[] = [];
  let store = '';
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order: Array<'off' | 'on'> = round % 2 ? ['on', 'off'] : ['off', 'on'];
      const cpuOf: Partial<Record<'off' | 'on', number>> = {};
      for (const v of order) {
        // The sandbox rotates refresh tokens: the previous runner's refresh spent the one it started with.
        const hcm = { ...hcmEnv(sandbox), HCM_REFRESH_TOKEN: await sandbox.call<string>('issueRefreshToken') };
        const r = await runner(`tracing-${v}`, { dir, limits, env: { ...hcm, ...env[v] } }, env[v]);
        const e0 = receiver.counts();
        let loadRes: LoadResult;
        let n: number;
        let cpu: number;
        let during: { requests: number; bytes: number };
        try {
          store = r.ready.storeKind;
          const url = r.ready.webhooks[integration]!.live;
          await e2eFirstCall(`tracing (${v})`, url);
          log(`tracing ${v} (${store}): closed loop, sync mode, ${CONNECTIONS} connections (round ${round + 1})`);
          const d0 = receiver.counts();
          const cpu0 = await r.call<number>('cpu');
          loadRes = await load(loadOpts(url));
          const cpu1 = await r.call<number>('cpu');
          const d1 = receiver.counts();
          during = { requests: d1.requests - d0.requests, bytes: d1.bytes - d0.bytes };
          n = (await r.call<Timings>('timings', { integration })).rows.length - 1;
          cpu = (cpu1 - cpu0) / n;
        } finally {
          // Stopping flushes the spans still batched (the exporter is shut down with the server).
          await r.stop();
        }
        const e1 = receiver.counts();
        const total = { requests: e1.requests - e0.requests, bytes: e1.bytes - e0.bytes };
        if (v === 'on' && total.requests === 0) throw new Error('tracing: tracing on, but the receiver got no export request');
        if (v === 'off' && total.requests !== 0) throw new Error(`tracing: tracing off, but the receiver got ${total.requests} export requests`);
        runs.push({ tracing: v, load: loadRes, executions: n, cpuPerExecutionUs: cpu, exportDuringLoad: during, exportTotal: total });
        cpuOf[v] = cpu;
      }
      diffs.push(cpuOf.on! - cpuOf.off!);
    }
  } finally {
    await sandbox.stop();
    await receiver.close();
  }
  const of = (v: 'off' | 'on') => runs.filter((x) => x.tracing === v);
  return {
    store,
    limits,
    rounds: ROUNDS,
    off: median(of('off'), (x) => x.load.rps),
    on: median(of('on'), (x) => x.load.rps),
    offCpuUs: median(of('off'), (x) => x.cpuPerExecutionUs).cpuPerExecutionUs,
    onCpuUs: median(of('on'), (x) => x.cpuPerExecutionUs).cpuPerExecutionUs,
    costPerExecutionUs: median(diffs, (x) => x),
    runs,
  };
}

interface PgResult {
  status: 'measured' | 'skipped';
  reason?: string;
  queue: 'table' | 'pg-boss' | 'in-process';
  intake?: IntakeResult;
  sync?: SyncResult;
  e2e?: E2EResult;
}

function benchDatabaseUrl(): string {
  if (flags['database-url']) return flags['database-url'];
  const out = execFileSync('bash', [join(repoRoot, 'scripts', 'ensure-postgres.sh')], {
    env: { ...process.env, PGDATABASE_TEST: 'hcm_bench' },
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop()!;
}

/** A fresh database each run: drop everything a previous run left in the bench database. */
async function resetPgDatabase(url: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'`);
    for (const r of rows) await client.query(`DROP SCHEMA IF EXISTS "${r.nspname}" CASCADE`);
    await client.query('CREATE SCHEMA IF NOT EXISTS public');
  } finally {
    await client.end();
  }
}

async function keyedQueue(): Promise<KeyedQueueResult | { skipped: string }> {
  let url: string;
  try {
    url = benchDatabaseUrl();
    if (!/\/hcm_bench(\?|$)/.test(url) && !flags['database-url']) throw new Error(`unexpected URL ${url}`);
    await resetPgDatabase(url);
  } catch (err) {
    return { skipped: `PostgreSQL not available: ${(err as Error).message.split('\n')[0]}` };
  }
  // Claims of 16: a full pass over the 10 000 rows is 625 claims; --quick stops at 200.
  return keyedQueueScenario(url, QUICK ? 200 : 1000, log);
}

async function postgres(): Promise<PgResult> {
  const queue = existsSync(join(repoRoot, 'src', 'store', 'postgres', 'table-queue.ts'))
    ? 'table'
    : existsSync(join(repoRoot, 'src', 'runtime', 'pg-queue.ts'))
      ? 'pg-boss'
      : 'in-process';
  let url: string;
  try {
    url = benchDatabaseUrl();
    if (!/\/hcm_bench(\?|$)/.test(url) && !flags['database-url']) throw new Error(`unexpected URL ${url}`);
    await resetPgDatabase(url);
  } catch (err) {
    return { status: 'skipped', queue, reason: `PostgreSQL not available: ${(err as Error).message.split('\n')[0]}` };
  }
  const intakeResult = await intake({ databaseUrl: url });
  await resetPgDatabase(url);
  const syncResult = await syncOverhead({ databaseUrl: url });
  await resetPgDatabase(url);
  const e2eResult = await e2e({ databaseUrl: url });
  return { status: 'measured', queue, intake: intakeResult, sync: syncResult, e2e: e2eResult };
}

// --- durable execution: checkpoints and waits ----------------------------------------------------

/** A PostgreSQL URL for a scenario that runs on both stores (reset), or why not. */
async function pgForScenario(): Promise<{ url: string } | { skipped: string }> {
  if (flags['no-pg']) return { skipped: '--no-pg' };
  try {
    const url = benchDatabaseUrl();
    if (!/\/hcm_bench(\?|$)/.test(url) && !flags['database-url']) throw new Error(`unexpected URL ${url}`);
    await resetPgDatabase(url);
    return { url };
  } catch (err) {
    return { skipped: `PostgreSQL not available: ${(err as Error).message.split('\n')[0]}` };
  }
}

/** `n` POSTs of BODY to `url`, `parallel` at a time; how many got a 2xx. */
async function postMany(url: string, n: number, parallel = 32): Promise<number> {
  let next = 0;
  let ok = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const res = await fetch(url, { method: 'POST', headers: JSON_HEADERS, body: BODY });
      await res.arrayBuffer();
      if (res.ok) ok++;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return ok;
}

/** Polls `done` every 200 ms until it is true or `timeoutMs` passed; whether it became true. */
async function until(done: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await sleep(200);
  }
  return false;
}

interface DurableVariant {
  build: 'this' | 'baseline';
  store: string;
  /** Executions of the backlog that finished. */
  finished: number;
  /** Executions finished per second, from the first start to the last finish of the backlog. */
  ratePerSec: number;
  cpuPerExecutionUs: number;
  commitsPerExecution?: number;
}
interface DurableStoreResult {
  store: string;
  backlog: number;
  runs: DurableVariant[];
  /** Median executions/s per build. */
  thisRate: number;
  baselineRate?: number;
}
interface DurableResult {
  baseline?: string;
  sqlite: DurableStoreResult;
  pg?: DurableStoreResult | { skipped: string };
}

/** durable: executions accepted first (workers paused), then run by a fresh runner. */
const DURABLE_BACKLOG = QUICK ? 2000 : 8000;

/**
 * The 2-step write-then-read integration (a checkpoint after the write), async: DURABLE_BACKLOG
 * requests accepted by a runner with its workers paused, then a fresh runner on the same store
 * resumes and runs them all — executions/s of the workers alone, with no intake competing for the
 * cores. With `--baseline DIR`, the same against the build in DIR (e.g. a checkout of the commit
 * before checkpoints), alternating which goes first per round.
 */
async function durableOn(databaseUrl?: string): Promise<DurableStoreResult> {
  const integration = 'bench-write-read';
  const dir = writeIntegrations(join(tmp, `durable-${databaseUrl ? 'pg' : 'sqlite'}`), { 'write-read.yaml': writeThenReadYaml(integration) });
  const sandbox = await startSandbox();
  const builds: Array<'this' | 'baseline'> = BASELINE ? ['this', 'baseline'] : ['this'];
  const runs: DurableVariant[] = [];
  let store = '';
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...builds].reverse() : builds;
      for (const build of order) {
        if (databaseUrl) await resetPgDatabase(databaseUrl);
        const dataDir = databaseUrl ? undefined : mkdtempSync(join(tmp, `data-durable-${build}-`));
        const processEnv = build === 'baseline' ? { BENCH_PRODUCT_ROOT: BASELINE! } : undefined;
        const hcm = { ...hcmEnv(sandbox), HCM_REFRESH_TOKEN: await sandbox.call<string>('issueRefreshToken') };
        // Accept the backlog with the workers paused: every request a durable `queued` row.
        const intakeRunner = await runner(
          `durable-intake-${build}`,
          { dir, dataDir, databaseUrl, limits: { concurrency: 0, backlog: 1e9 }, env: hcm },
          processEnv,
        );
        try {
          log(`durable (${build} build): accepting ${DURABLE_BACKLOG} executions (round ${round + 1})`);
          await postMany(intakeRunner.ready.webhooks[integration]!.live, DURABLE_BACKLOG, 64);
        } finally {
          await intakeRunner.stop();
        }
        const r = await runner(`durable-${build}`, { dir, dataDir, databaseUrl, limits: e2eLimits(), env: hcm }, processEnv);
        try {
          store = r.ready.storeKind;
          log(`durable (${store}, ${build} build): running the backlog, write → read`);
          const c0 = (await r.call<Record<string, number>>('stats')).commits;
          const cpu0 = await r.call<number>('cpu');
          await until(async () => {
            const c = (await r.call<Timings>('timings', { integration })).counts;
            return (c.queued ?? 0) + (c.running ?? 0) === 0;
          }, 300_000);
          const cpu1 = await r.call<number>('cpu');
          const c1 = (await r.call<Record<string, number>>('stats')).commits;
          const t = await r.call<Timings>('timings', { integration });
          const done = t.rows.filter(([, s, f]) => s !== null && f !== null) as Array<[number, number, number]>;
          const first = Math.min(...done.map(([, s]) => s));
          const last = Math.max(...done.map(([, , f]) => f));
          if ((t.counts.failed ?? 0) > 0) log(`durable: ${t.counts.failed} executions failed`);
          runs.push({
            build,
            store,
            finished: done.length,
            ratePerSec: done.length / ((last - first) / 1000),
            cpuPerExecutionUs: (cpu1 - cpu0) / Math.max(1, done.length),
            commitsPerExecution: c0 !== undefined && c1 !== undefined ? (c1 - c0) / Math.max(1, done.length) : undefined,
          });
        } finally {
          await r.stop();
        }
      }
    }
  } finally {
    await sandbox.stop();
  }
  const of = (b: 'this' | 'baseline') => runs.filter((x) => x.build === b);
  return {
    store,
    backlog: DURABLE_BACKLOG,
    runs,
    thisRate: median(of('this'), (x) => x.ratePerSec).ratePerSec,
    baselineRate: BASELINE ? median(of('baseline'), (x) => x.ratePerSec).ratePerSec : undefined,
  };
}

async function durableScenario(): Promise<DurableResult> {
  if (BASELINE) buildProduct(BASELINE);
  const result: DurableResult = {
    baseline: BASELINE ? `${BASELINE} (${gitIn(BASELINE, ['rev-parse', '--short', 'HEAD'])})` : undefined,
    sqlite: await durableOn(),
  };
  const pg = await pgForScenario();
  result.pg = 'url' in pg ? await durableOn(pg.url) : pg;
  return result;
}

interface WaitStoreResult {
  store: string;
  /** Executions already waiting (1 h) while the measured ones wait. */
  background: number;
  measured: number;
  /** Seconds to accept the measured executions (POSTs answered). */
  acceptSec: number;
  /** wokeAt − wakeAt of each measured execution, ms. */
  lag: ReturnType<typeof summarize>;
  /** finishedAt − wakeAt, ms. */
  finishLag: ReturnType<typeof summarize>;
  /** Measured executions ÷ (last finished − first accepted), including their 1 s wait. */
  ratePerSec: number;
  unfinished: number;
}
interface WaitResult {
  sqlite: WaitStoreResult;
  pg?: WaitStoreResult | { skipped: string };
}

const WAITS_MEASURED = 1000;
const WAITS_BACKGROUND = QUICK ? 1000 : 10_000;

/** WAITS_BACKGROUND executions waiting an hour, then WAITS_MEASURED each waiting 1 s: when they wake. */
async function waitsOn(databaseUrl?: string): Promise<WaitStoreResult> {
  const dir = writeIntegrations(join(tmp, `waits-${databaseUrl ? 'pg' : 'sqlite'}`), {
    'wait-1s.yaml': waitYaml('bench-wait', '1s'),
    'wait-1h.yaml': waitYaml('bench-wait-long', '1h'),
  });
  const r = await runner('waits', { dir, databaseUrl, limits: e2eLimits() }, { HCM_RUNNER_MAX_WAITING: String(WAITS_BACKGROUND + WAITS_MEASURED) });
  try {
    const store = r.ready.storeKind;
    log(`waits (${store}): ${WAITS_BACKGROUND} executions waiting 1 h`);
    await postMany(r.ready.webhooks['bench-wait-long']!.live, WAITS_BACKGROUND);
    const waiting = await until(
      async () => ((await r.call<Timings>('timings', { integration: 'bench-wait-long' })).counts.waiting ?? 0) >= WAITS_BACKGROUND,
      180_000,
    );
    if (!waiting) throw new Error('waits: the background executions did not all reach waiting within 3 minutes');
    log(`waits (${store}): ${WAITS_MEASURED} executions waiting 1 s`);
    const t0 = Date.now();
    await postMany(r.ready.webhooks['bench-wait']!.live, WAITS_MEASURED);
    const acceptSec = (Date.now() - t0) / 1000;
    await until(async () => ((await r.call<Timings>('timings', { integration: 'bench-wait' })).counts.succeeded ?? 0) >= WAITS_MEASURED, 120_000);
    const w = await r.call<{ counts: Record<string, number>; rows: Array<[number, number, number]> }>('waits', {
      integration: 'bench-wait',
      step: 'pause',
    });
    const t = await r.call<Timings>('timings', { integration: 'bench-wait' });
    const firstQueued = Math.min(...t.rows.map(([q]) => q));
    const lastFinished = Math.max(...w.rows.map(([, , f]) => f));
    return {
      store,
      background: WAITS_BACKGROUND,
      measured: WAITS_MEASURED,
      acceptSec,
      lag: summarize(w.rows.map(([a, b]) => b - a)),
      finishLag: summarize(w.rows.map(([a, , f]) => f - a)),
      ratePerSec: w.rows.length / ((lastFinished - firstQueued) / 1000),
      unfinished: WAITS_MEASURED - (w.counts.succeeded ?? 0),
    };
  } finally {
    await r.stop();
  }
}

async function waitsScenario(): Promise<WaitResult> {
  const result: WaitResult = { sqlite: await waitsOn() };
  const pg = await pgForScenario();
  result.pg = 'url' in pg ? await waitsOn(pg.url) : pg;
  return result;
}

function durableSection(d: DurableResult): string[] {
  const out = ['## 11. Durable execution: checkpoints', ''];
  out.push(
    `An async webhook whose first step is a write (\`hcm.initiateJobChange\`, a checkpoint is committed after it) and whose second a read (\`hcm.getStaffingWorkerById\`), both against the HCM sandbox in its own process: ${int(DURABLE_BACKLOG)} requests accepted by a runner with its workers paused, then a fresh runner on the same store runs them all (runner limits as in the end-to-end scenario) — executions per second from the first start to the last finish, with no intake competing for the cores. Runner CPU and store commits are per execution over that drain.${d.baseline ? ` Baseline: the build in ${d.baseline}, without checkpoints, alternated with this one (${ROUNDS} round${ROUNDS > 1 ? 's' : ''}, median).` : ' Run with `--baseline DIR` to compare with another checkout in the same run.'}`,
    '',
  );
  out.push('| store | build | executions/s | runner CPU µs / execution | commits / execution |\n|---|---|---|---|---|');
  for (const sr of [d.sqlite, d.pg]) {
    if (!sr) continue;
    if ('skipped' in sr) {
      out.push(row(['PostgreSQL', '–', `skipped: ${sr.skipped}`, '', '']));
      continue;
    }
    for (const v of sr.runs)
      out.push(
        row([sr.store, v.build, int(v.ratePerSec), int(v.cpuPerExecutionUs), v.commitsPerExecution !== undefined ? f2(v.commitsPerExecution) : '–']),
      );
    if (sr.baselineRate) out.push(row([sr.store, '**loss**', `**${pct(1 - sr.thisRate / sr.baselineRate)}**`, '', '']));
  }
  out.push('');
  return out;
}

function waitsSection(w: WaitResult): string[] {
  const out = ['## 12. Durable execution: waits', ''];
  out.push(
    `Executions that \`core.wait\` 1 s (${WAITS_MEASURED}), accepted while ${int(w.sqlite.background)} others wait an hour: lag is \`wokeAt − wakeAt\` of the wait step, finish lag \`finishedAt − wakeAt\`; executions/s counts the measured ones from the first accepted to the last finished (their 1 s wait included).`,
    '',
  );
  out.push(
    '| store | accepted in s | lag p50 ms | lag p99 ms | lag max ms | finish lag p99 ms | executions/s | unfinished |\n|---|---|---|---|---|---|---|---|',
  );
  for (const sr of [w.sqlite, w.pg]) {
    if (!sr) continue;
    if ('skipped' in sr) {
      out.push(row(['PostgreSQL', `skipped: ${sr.skipped}`, '', '', '', '', '', '']));
      continue;
    }
    out.push(
      row([sr.store, f2(sr.acceptSec), f1(sr.lag.p50), f1(sr.lag.p99), f1(sr.lag.max), f1(sr.finishLag.p99), int(sr.ratePerSec), sr.unfinished]),
    );
  }
  out.push('');
  return out;
}

// --- report ------------------------------------------------------------------------------------

interface Results {
  intake?: IntakeResult;
  e2e?: E2EResult;
  sync?: SyncResult;
  reload?: ReloadResult;
  load1000?: ManyResult;
  schedule?: ScheduleResult;
  pg?: PgResult;
  foreach?: ForEachResult;
  idempotentIntake?: IdempotentResult;
  tracing?: TracingResult;
  durable?: DurableResult;
  waits?: WaitResult;
  keyedQueue?: KeyedQueueResult | { skipped: string };
}

function git(args: string[]): string {
  return gitIn(repoRoot, args);
}

function gitIn(dir: string, args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

const row = (cells: Array<string | number>) => `| ${cells.join(' | ')} |`;
const loadRow = (label: string, r: LoadResult) =>
  row([label, int(r.rps), f2(r.p50), f2(r.p99), f2(r.max), `${int(r.ok)} / ${int(r.requests)}${r.errors ? `, ${r.errors} errors` : ''}`]);
const LOAD_HEAD = `| | requests/s | p50 ms | p99 ms | max ms | 2xx / all |\n|---|---|---|---|---|---|`;

function report(res: Results, startedAt: Date, elapsedSec: number): string {
  const commit = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--', 'src']) ? ' + uncommitted changes in src/' : '';
  const cpu = cpus();
  const targets: string[][] = [];
  const out: string[] = [];
  out.push('# Benchmarks');
  out.push('');
  out.push('Generated by `npm run bench` (bench/run.ts) — edit the profiling notes in `bench/profiling.md`, not here.');
  out.push('');
  out.push('| | |\n|---|---|');
  out.push(row(['Date', startedAt.toISOString()]));
  out.push(row(['Commit', `${commit}${dirty}`]));
  out.push(row(['Machine', `${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${mb(totalmem())} RAM (${mb(freemem())} free at the end)`]));
  out.push(row(['Node', process.version]));
  const generator =
    closedLoopGenerator() === 'wrk'
      ? 'wrk (C, one thread) for closed-loop runs; autocannon for fixed-rate runs'
      : 'autocannon (programmatic; wrk not available)';
  out.push(
    row([
      'Load generator',
      `${generator}, ${CONNECTIONS} connections unless noted, ${WARMUP} s warm-up + ${DURATION} s measured${QUICK ? ' (**--quick**: short runs, indicative only)' : ''}`,
    ]),
  );
  out.push(row(['Processes', 'the server under test and the load generator each in their own process; the HCM sandbox in a third']));
  out.push(
    row([
      'Code under test',
      `${CODE}; every process started with the runner's Node flags (\`${productNodeFlags().join(' ') || 'none'}\`, from bin/hcm-runner.js)`,
    ]),
  );
  out.push(row(['Run time', `${Math.round(elapsedSec)} s`]));
  out.push('');
  out.push(
    'Latencies are client-side (the µs histogram of wrk, or autocannon per response at full precision) unless noted. Other processes on the machine (e.g. test runs) disturb the figures; compare numbers from the same run.',
  );
  out.push('');

  if (res.intake) {
    const i = res.intake;
    const best = Math.max(i.bare.rps, i.bareRaw.rps);
    const ratio = i.runner.rps / best;
    targets.push([
      'Webhook intake ≥ 60 % of bare Hono requests/s',
      `${(ratio * 100).toFixed(0)} % (of the faster bare variant)`,
      ratio >= 0.6 ? 'yes' : 'no',
    ]);
    out.push('## 1. Webhook intake (async, durable, SQLite)');
    out.push('');
    out.push(
      '`POST /webhooks/{token}` with a ~300-byte JSON body; the runner answers `200 {"executionId"}` after the `queued` row is committed and on disk (WAL, group commit; a batch\'s WAL fsync runs off the event loop, docs/server.md). The workers are paused (`concurrency: 0`) so this is intake alone; the second runner row has them running the trivial step at the default concurrency. The bare Hono server is the same @hono/node-server with a route that parses the JSON body and answers the same 200 JSON, in two variants: idiomatic (`await c.req.json()`, through the web `Request`) and minimal (the body read straight from Node\'s `IncomingMessage`, as the runner does, then `JSON.parse`). The headline ratio is against the faster of the two.',
    );
    out.push('');
    out.push(LOAD_HEAD);
    out.push(loadRow('bare Hono, `c.req.json()`', i.bare));
    out.push(loadRow('bare Hono, body from `IncomingMessage`', i.bareRaw));
    out.push(loadRow('hcm-runner intake', i.runner));
    if (i.runnerWorking) out.push(loadRow('hcm-runner intake, workers running', i.runnerWorking));
    out.push('');
    out.push(
      `**Ratio: ${(ratio * 100).toFixed(0)} % of the faster bare Hono's requests/s** (${((i.runner.rps / i.bare.rps) * 100).toFixed(0)} % of idiomatic, ${((i.runner.rps / i.bareRaw.rps) * 100).toFixed(0)} % of minimal; target ≥ 60 %). Rows recorded \`queued\` in the store: ${int(i.recorded)} (every accepted request of warm-up and measurement)${i.stats?.enqueueCommits ? `, in ${int(i.stats.enqueueCommits)} group commits (${f1(i.stats.enqueueCalls! / i.stats.enqueueCommits)} executions per commit)` : ''}. Runner CPU per accepted request: **${int(i.cpuPerRequestUs)} µs** (user + system; less sensitive to other load on the machine than requests/s).`,
    );
    out.push('');
  }
  if (res.e2e) out.push(...e2eSection('## 2. End to end: webhook → core.transform → HCM GET (SQLite)', res.e2e, targets, true));
  if (res.sync) {
    const s = res.sync;
    const d50 = s.runner.p50 - s.bare.p50;
    const d99 = s.runner.p99 - s.bare.p99;
    targets.push(['Sync webhook overhead p50 < 1 ms', `${f2(d50)} ms`, d50 < 1 ? 'yes' : 'no']);
    out.push('## 3. Sync webhook overhead');
    out.push('');
    out.push(
      'One connection (requests back to back), so the latency is the per-request cost, not queueing. The runner runs a sync webhook with one `core.transform` step: intake, the run from memory, its record committed once at the end (one `synchronous=FULL` commit at this concurrency), the answer.',
    );
    out.push('');
    out.push(LOAD_HEAD);
    out.push(loadRow('bare Hono (body from `IncomingMessage`)', s.bare));
    out.push(loadRow('hcm-runner, sync, 1 step', s.runner));
    out.push('');
    out.push(
      `**Overhead over bare Hono: p50 ${f2(d50)} ms, p99 ${f2(d99)} ms** (target p50 < 1 ms). Runner CPU per sync request: ${int(s.cpuPerRequestUs)} µs.`,
    );
    out.push('');
  }
  if (res.reload) {
    const r = res.reload;
    targets.push([
      `Hot reload p50 < 200 ms${r.mode === 'api' ? ' (POST /api/reload — no watcher yet)' : ''}`,
      `${f1(r.p50)} ms`,
      r.p50 < 200 ? 'yes' : 'no',
    ]);
    out.push('## 4. Hot reload');
    out.push('');
    if (r.mode === 'watcher') {
      out.push(
        `File watcher: write the file, then poll the (sync) webhook every ~2 ms until it answers the new version. ${r.edits} edits of one integration in a folder of ${r.folderSize} files.`,
      );
    } else {
      out.push(
        `**No file watcher in this build**: measured write → \`POST /api/reload\` → polled the (sync) webhook until it answered the new version. ${r.edits} edits of one integration in a folder of ${r.folderSize} files. Re-run when the watcher lands (the scenario detects it).`,
      );
    }
    out.push('');
    out.push('| | p50 ms | p99 ms | max ms |\n|---|---|---|---|');
    out.push(row(['write → new behaviour live', f1(r.p50), f1(r.p99), f1(r.max)]));
    if (r.apiP50 !== undefined) out.push(row(['of which `POST /api/reload`', f1(r.apiP50), f1(r.apiP99!), '']));
    out.push('');
  }
  if (res.load1000) {
    const m = res.load1000;
    targets.push(['1 000 integrations loaded < 1 s', `${f1(m.serverStartMs)} ms (startServer)`, m.serverStartMs < 1000 ? 'yes' : 'no']);
    targets.push(['… under 300 MB', `${mb(m.serverRss)} RSS`, m.serverRss < 300 * 1048576 ? 'yes' : 'no']);
    out.push('## 4b. 1 000 integrations');
    out.push('');
    out.push(
      'Generated files (9 in 10 webhooks with an HCM connection, `if`, `retry`, `core.respond` and five expressions; 1 in 10 cron schedules), each process fresh. `startServer` includes opening a new SQLite store, compiling every file and creating the webhook tokens; RSS after a GC.',
    );
    out.push('');
    out.push('| | time | RSS | heap used |\n|---|---|---|---|');
    out.push(row(['`startServer`, empty folder (baseline)', `${f1(m.baselineStartMs)} ms`, mb(m.baselineRss), '']));
    out.push(row([`\`startServer\`, ${m.count} integrations`, `${f1(m.serverStartMs)} ms`, mb(m.serverRss), mb(m.serverHeap)]));
    out.push(row([`\`loadFiles\` alone (${m.loadFilesOk} compiled)`, `${f1(m.loadFilesMs)} ms`, mb(m.loadFilesRss), '']));
    out.push('');
  }
  if (res.schedule) {
    const s = res.schedule;
    out.push('## 5. Schedule firing jitter');
    out.push('');
    if (s.status === 'pending') {
      targets.push(['Schedule jitter (`every: 1s`)', 'pending', '–']);
      out.push(
        `**Pending**: ${s.reason}. The scenario (\`every: 1s\`, firedAt − scheduledAt over ${SCHEDULE_TICKS} ticks) is in bench/run.ts and runs as soon as the schedule loop lands.`,
      );
    } else {
      targets.push(['Schedule jitter (`every: 1s`), p99', `${f1(s.p99)} ms`, '(no target)']);
      out.push(`\`every: 1s\`, \`$trigger.firedAt − $trigger.scheduledAt\` over ${s.ticks} ticks (the first tick dropped).`);
      out.push('');
      out.push('| min ms | p50 ms | p99 ms | max ms |\n|---|---|---|---|');
      out.push(row([f1(s.min), f1(s.p50), f1(s.p99), f1(s.max)]));
    }
    out.push('');
  }
  if (res.pg) {
    const p = res.pg;
    out.push('## 6. PostgreSQL');
    out.push('');
    if (p.status === 'skipped') out.push(`Skipped: ${p.reason}.`);
    else {
      out.push(
        p.queue === 'table'
          ? 'PostgreSQL store, the `executions` table as the queue (`--database-url`; claims with leases, LISTEN/NOTIFY wake-ups), local PostgreSQL on the same machine (it shares the 2 cores).'
          : p.queue === 'pg-boss'
            ? 'PostgreSQL store and the pg-boss queue (`--database-url`), local PostgreSQL on the same machine (it shares the 2 cores).'
            : '**The pg-boss queue is not in this build (pending)**: these figures are the PostgreSQL *store* with the in-process queue, i.e. what `--database-url` does today. Local PostgreSQL on the same machine (it shares the 2 cores).',
      );
      out.push('');
      if (p.intake) {
        out.push('Intake (workers paused):');
        out.push('');
        out.push(LOAD_HEAD);
        out.push(loadRow('bare Hono, `c.req.json()`', p.intake.bare));
        out.push(loadRow('bare Hono, body from `IncomingMessage`', p.intake.bareRaw));
        out.push(loadRow('hcm-runner intake, PostgreSQL', p.intake.runner));
        out.push('');
        out.push(`Ratio: ${((p.intake.runner.rps / Math.max(p.intake.bare.rps, p.intake.bareRaw.rps)) * 100).toFixed(0)} % of the faster bare Hono.`);
        out.push('');
      }
      if (p.sync) {
        const d50 = p.sync.runner.p50 - p.sync.bare.p50;
        targets.push(['PostgreSQL sync webhook overhead p50 < 3 ms', `${f2(d50)} ms`, d50 < 3 ? 'yes' : 'no']);
        out.push(
          'Sync webhook overhead on PostgreSQL (as in section 3: one connection, one `core.transform` step; the row is written once, when the run ends):',
        );
        out.push('');
        out.push(LOAD_HEAD);
        out.push(loadRow('bare Hono (body from `IncomingMessage`)', p.sync.bare));
        out.push(loadRow('hcm-runner, sync, 1 step, PostgreSQL', p.sync.runner));
        out.push('');
        out.push(
          `**Overhead over bare Hono: p50 ${f2(d50)} ms, p99 ${f2(p.sync.runner.p99 - p.sync.bare.p99)} ms** (target p50 < 3 ms). Runner CPU per sync request: ${int(p.sync.cpuPerRequestUs)} µs; PostgreSQL statements per request: ${f2(p.sync.queriesPerRequest ?? NaN)}.`,
        );
        out.push('');
      }
      if (p.e2e) {
        targets.push(['≥ 1 000 PostgreSQL end-to-end executions/s', `${int(p.e2e.sync.rps)}/s (closed loop)`, p.e2e.sync.rps >= 1000 ? 'yes' : 'no']);
        out.push(...e2eSection('End to end on PostgreSQL:', p.e2e, undefined, false));
      }
    }
    out.push('');
  }

  if (res.foreach) {
    const fe = res.foreach;
    out.push('## 7. forEach groups');
    out.push('');
    out.push(
      `A sync webhook whose \`forEach\` group runs ${fe.items} items × 2 steps — \`core.transform\`, then \`hcm.getStaffingWorkerById\` against the HCM sandbox in its own process — with the group's \`concurrency\` at ${FOREACH_CONCURRENCY.join(' and ')}; a last step answers the item count. Closed loop, ${fe.connections} connections (each execution is ${fe.items} HCM calls), ${fe.store}; one answer is one execution of ${fe.items} items.`,
    );
    out.push('');
    out.push(
      '| `concurrency` | executions/s | items/s | p50 ms | p99 ms | 2xx / all | runner CPU per item | per execution | sandbox CPU per item | failed |',
    );
    out.push('|---|---|---|---|---|---|---|---|---|---|');
    for (const x of fe.runs)
      out.push(
        row([
          x.concurrency,
          f1(x.load.rps),
          int(x.itemsPerSec),
          f1(x.load.p50),
          f1(x.load.p99),
          `${int(x.load.ok)} / ${int(x.load.requests)}${x.load.errors ? `, ${x.load.errors} errors` : ''}`,
          `**${int(x.cpuPerItemUs)} µs**`,
          `${int(x.cpuPerExecutionUs)} µs`,
          `${int(x.sandboxPerItemUs)} µs`,
          x.failed,
        ]),
      );
    out.push('');
    out.push(
      'CPU is user + system over warm-up and measurement, divided by the executions recorded (the ones still running when the load stopped included: the bench waits for them). `concurrency` shortens one execution (latency) by overlapping its HCM calls; the CPU per item says what an item costs the runner either way.',
    );
    out.push('');
  }
  if (res.idempotentIntake) {
    const id = res.idempotentIntake;
    out.push('## 8. Idempotent intake');
    out.push('');
    out.push(
      `Webhook intake as in section 1 (async, workers paused), the same integration with and without \`idempotencyKey: "{% $trigger.headers.'${KEY_HEADER}' %}"\`. The load generator sets \`${KEY_HEADER}\` to a value no other request sends (a counter behind a per-run prefix), on both variants, so every keyed request claims a new key — one insert into the keys table, indexed by (integration, URL kind, key), in the execution's commit. Each variant runs in a fresh runner on an empty store.`,
    );
    out.push('');
    const section = (label: string, s: IdempotentStoreResult) => {
      out.push(`${label}:`);
      out.push('');
      out.push(LOAD_HEAD);
      out.push(loadRow('intake, no key', s.plain.load));
      out.push(loadRow('intake, `idempotencyKey` (a new key each request)', s.keyed.load));
      out.push('');
      out.push(
        `With the key: **${pct(s.keyed.load.rps / s.plain.load.rps)} of the requests/s without**; runner CPU per accepted request ${int(s.keyed.cpuPerRequestUs)} µs with, ${int(s.plain.cpuPerRequestUs)} µs without (${int(s.keyed.cpuPerRequestUs - s.plain.cpuPerRequestUs)} µs for the key). Rows recorded: ${int(s.keyed.recorded)} with, ${int(s.plain.recorded)} without.`,
      );
      out.push('');
    };
    section('SQLite', id.sqlite);
    if (id.pg && 'skipped' in id.pg) {
      out.push(`PostgreSQL: skipped (${id.pg.skipped}).`);
      out.push('');
    } else if (id.pg) section('PostgreSQL (local, same machine)', id.pg);
  }
  if (res.tracing) {
    const t = res.tracing;
    const kb = (bytes: number) => `${f1(bytes / 1024)} KB`;
    out.push('## 9. Tracing');
    out.push('');
    out.push(
      `The end-to-end closed loop of section 2 (sync mode, ${t.off.load.connections} connections, \`core.transform\` then \`hcm.getStaffingWorkerById\` against the HCM sandbox in its own process; runner limits \`concurrency ${t.limits.concurrency}\`, \`integration-concurrency ${t.limits.perIntegration}\`, ${t.store}), each variant in a fresh runner: tracing off (\`OTEL_SDK_DISABLED=true\`: the SDK is not loaded) and tracing on — \`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT\` pointing at a minimal OTLP/HTTP receiver in the bench's process (a loopback \`node:http\` server that answers 200 to \`POST /v1/traces\` and only counts), protobuf, the SDK's default batching (docs/operations.md, Tracing). ${t.rounds > 1 ? `${t.rounds} rounds, alternating which variant goes first; the rows are each variant's median round by executions/s, the CPU figures medians over the rounds.` : 'One round (`--rounds N` alternates which variant goes first and keeps medians).'}`,
    );
    out.push('');
    out.push(
      '| tracing | executions/s | p50 ms | p99 ms | max ms | 2xx / all | runner CPU per execution | export requests (during the load / in all) | bytes exported (during / in all) |',
    );
    out.push('|---|---|---|---|---|---|---|---|---|');
    for (const [label, x, cpuUs] of [
      ['off', t.off, t.offCpuUs],
      ['on, OTLP/HTTP', t.on, t.onCpuUs],
    ] as const)
      out.push(
        row([
          label,
          int(x.load.rps),
          f2(x.load.p50),
          f2(x.load.p99),
          f2(x.load.max),
          `${int(x.load.ok)} / ${int(x.load.requests)}${x.load.errors ? `, ${x.load.errors} errors` : ''}`,
          `**${int(cpuUs)} µs**`,
          `${int(x.exportDuringLoad.requests)} / ${int(x.exportTotal.requests)}`,
          `${kb(x.exportDuringLoad.bytes)} / ${kb(x.exportTotal.bytes)}`,
        ]),
      );
    out.push('');
    out.push(
      `**Tracing costs ${int(t.costPerExecutionUs)} µs of runner CPU per execution** (on − off${t.rounds > 1 ? ', the median of the per-round differences' : ''}; ${pct(t.costPerExecutionUs / t.offCpuUs)} of the execution's cost with tracing off); executions/s with tracing on: ${pct(t.on.load.rps / t.off.load.rps)} of off. ${int(t.on.executions)} executions with tracing on sent ${int(t.on.exportTotal.requests)} export requests, ${kb(t.on.exportTotal.bytes)} (${int(t.on.exportTotal.bytes / t.on.executions)} bytes per execution). CPU is user + system over warm-up and measurement, divided by the executions recorded; the batches exported while the load ran are in it, the last flush (when the runner stops) is not.`,
    );
    out.push('');
  }
  if (res.durable) {
    out.push(...durableSection(res.durable));
    for (const sr of [res.durable.sqlite, res.durable.pg])
      if (sr && !('skipped' in sr) && sr.baselineRate)
        targets.push([
          `checkpoints cost ≤ 15 % of end-to-end executions/s (${sr.store})`,
          pct(1 - sr.thisRate / sr.baselineRate),
          sr.thisRate >= 0.85 * sr.baselineRate ? 'yes' : 'no',
        ]);
  }
  if (res.waits) {
    out.push(...waitsSection(res.waits));
    for (const sr of [res.waits.sqlite, res.waits.pg])
      if (sr && !('skipped' in sr))
        targets.push([
          `wake-up lag p99 < 1 s with ${int(sr.background)} executions waiting (${sr.store})`,
          `${f1(sr.lag.p99)} ms`,
          sr.lag.p99 < 1000 ? 'yes' : 'no',
        ]);
  }
  if (res.keyedQueue) {
    const k = res.keyedQueue;
    out.push('## 10. Keyed queue (PostgreSQL)');
    out.push('');
    if ('skipped' in k) out.push(`Skipped (${k.skipped}).`);
    else {
      out.push(
        `PostgreSQL's claim (the queue's own statement) with ${int(KEYED_QUEUE.executions)} queued executions accepted round-robin over ${int(KEYED_QUEUE.keys)} keys, claims of up to ${KEYED_QUEUE.slots} rows whose runs end at once — with \`concurrency: {key, limit: 1}\` (only the head of a free key is claimable) and without keys (the same rows), in the same run, each in a fresh schema after a warm-up round. Measured in the bench's process over the pool (local PostgreSQL, same machine).`,
      );
      out.push('');
      out.push('| | claims | rows claimed | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|');
      out.push(row(['without keys', int(k.plain.claims), int(k.plain.claimed), f2(k.plain.p50), f2(k.plain.p99), f2(k.plain.max)]));
      out.push(row(['`concurrency: {key, limit: 1}`', int(k.keyed.claims), int(k.keyed.claimed), f2(k.keyed.p50), f2(k.keyed.p99), f2(k.keyed.max)]));
      out.push('');
      const ratio = k.keyed.p50 / k.plain.p50;
      out.push(
        `Claim p50 with keys: **${f2(ratio)}× without**. Claims with keys that found nothing while rows were queued: ${int(k.emptyKeyedClaims)}.`,
      );
      targets.push(['Per-key concurrency: claim p50 within 2× of without keys (PostgreSQL)', `${f2(ratio)}×`, ratio <= 2 ? 'yes' : 'no']);
    }
    out.push('');
  }
  out.push('## Targets');
  out.push('');
  out.push('| Target | Measured | Met |\n|---|---|---|');
  for (const t of targets) out.push(row(t));
  out.push('');
  const notes = join(repoRoot, 'bench', 'profiling.md');
  if (existsSync(notes)) {
    out.push(readFileSync(notes, 'utf8').trim());
    out.push('');
  }
  out.push('## Reproduce');
  out.push('');
  out.push(
    '```sh\nnpm run bench                 # everything, ~5 minutes; writes this file\nnpm run bench -- --quick      # 2 s per scenario\nnpm run bench -- --only intake,sync --out -   # a subset, printed\nnpm run bench -- --only foreach,idempotent-intake --no-pg --out -\nnpm run bench -- --only tracing --rounds 3 --out -   # tracing off vs on\nnpm run bench -- --only durable,waits --baseline ../before --rounds 3 --out -   # checkpoints vs a checkout without them; waits\n```',
  );
  out.push('');
  return out.join('\n');
}

function e2eSection(title: string, e: E2EResult, targets: string[][] | undefined, withTargets: boolean): string[] {
  const out: string[] = [title, ''];
  if (withTargets && targets)
    targets.push(['≥ 2 500 end-to-end executions/s (2 cores)', `${int(e.sync.rps)}/s (closed loop)`, e.sync.rps >= 2500 ? 'yes' : 'no']);
  out.push(
    `Two steps: \`core.transform\`, then \`hcm.getStaffingWorkerById\` (OAuth bearer, access token cached) against the HCM sandbox in its own process. Runner limits: \`concurrency ${e.limits.concurrency}\`, \`integration-concurrency ${e.limits.perIntegration}\` (the defaults 16/4 would cap one integration at 4 runs at once).`,
  );
  out.push('');
  out.push(
    `- **Closed loop** (sync mode, ${e.sync.connections} connections, each waits for its execution to finish): steady state by construction; latency = request → execution finished and answered.`,
  );
  out.push(LOAD_HEAD.replace('requests/s', 'executions/s'));
  out.push(loadRow('closed loop, sync', e.sync));
  out.push('');
  out.push(
    `Runner CPU per execution (closed loop): **${int(e.cpuPerExecutionUs)} µs** (user + system; the sandbox and the load generator use their own)${e.queriesPerExecution === undefined ? '' : `; PostgreSQL statements per execution: ${f2(e.queriesPerExecution)}`}${e.commitsPerExecution === undefined ? '' : `; store commits per execution: ${f2(e.commitsPerExecution)}`}.`,
  );
  out.push('');
  if (e.machine) {
    const m = e.machine;
    out.push(
      `The whole machine per execution (closed loop): **${int(m.allUs)} µs** of CPU over its ${m.cores} cores — the runner ${int(e.cpuPerExecutionUs)}, the HCM sandbox ${int(m.sandboxUs)}, the load generator, the kernel's network stack and anything else ${int(Math.max(0, m.allUs - e.cpuPerExecutionUs - m.sandboxUs))} — with ${pct(m.idle)} of the cores' time idle. At that cost the cores could carry at most ${int((m.cores * 1e6) / m.allUs)} executions/s; the runner runs its executions on one event loop, so its own ceiling is near 1 s ÷ its main thread's CPU per execution${m.runnerMainUs === undefined ? '' : ` (${int(m.runnerMainUs)} µs: ${int(1e6 / m.runnerMainUs)}/s; the rest of the runner's CPU is the garbage collector's helper threads and libuv's pool)`}.`,
    );
    out.push('');
  }
  if (e.async) {
    const a = e.async;
    out.push(
      `- **Open loop** (async mode at ${int(a.targetRate)} requests/s ≈ 80 % of the closed-loop rate): latency from the stored records, \`finishedAt − queuedAt\` of the ${int(a.executions)} executions queued in the measurement window.`,
    );
    out.push('');
    out.push('| requests/s sent | executions finished/s | p50 ms | p99 ms | max ms | failed | unfinished |\n|---|---|---|---|---|---|---|');
    out.push(row([int(a.sent.rps), int(a.ratePerSec), f1(a.p50), f1(a.p99), f1(a.max), a.failed, a.leftUnfinished]));
    out.push('');
  }
  return out;
}

// --- main --------------------------------------------------------------------------------------

const startedAt = new Date();
const results: Results = {};
try {
  log(`scenarios: ${[...only].join(', ')}; ${DURATION} s (+${WARMUP} s warm-up), ${CONNECTIONS} connections; tmp ${tmp}`);
  if (only.has('intake')) results.intake = await intake({ withWorkers: true });
  if (only.has('e2e')) results.e2e = await e2e();
  if (only.has('sync')) results.sync = await syncOverhead();
  if (only.has('reload')) results.reload = await reload();
  if (only.has('load1000')) results.load1000 = await many();
  if (only.has('schedule')) results.schedule = await schedule();
  if (only.has('foreach')) results.foreach = await forEachScenario();
  if (only.has('idempotent-intake')) results.idempotentIntake = await idempotentIntake();
  if (only.has('tracing')) results.tracing = await tracingScenario();
  if (only.has('durable')) results.durable = await durableScenario();
  if (only.has('waits')) results.waits = await waitsScenario();
  if (only.has('pg')) results.pg = await postgres();
  if (only.has('keyed-queue')) results.keyedQueue = await keyedQueue();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
const md = report(results, startedAt, (Date.now() - startedAt.getTime()) / 1000);
if (flags.json) writeFileSync(flags.json, JSON.stringify(results, null, 2));
if (OUT === '-') process.stdout.write(`${md}\n`);
else {
  writeFileSync(OUT, `${md}\n`);
  log(`wrote ${OUT}`);
}
process.exit(0);
