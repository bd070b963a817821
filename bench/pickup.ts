/**
 * Async pick-up latency on PostgreSQL: how long an accepted execution waits before a worker
 * starts it (`startedAt − queuedAt` of the stored record), with the runner idle otherwise.
 * Requests are sent one at a time with a gap, so the figure is the queue's wake-up path
 * (NOTIFY or poll, claim), not queueing behind other work.
 *
 *   node --import tsx bench/pickup.ts [--root REPO] [--database-url URL] [--n 200]
 *
 * `--root` runs another checkout's `bin/hcm-runner.js` (e.g. the previous queue) for comparison.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { intakeYaml } from './lib/integrations.js';

const { values: flags } = parseArgs({ options: { root: { type: 'string' }, 'database-url': { type: 'string' }, n: { type: 'string' } } });
const root = resolve(flags.root ?? join(import.meta.dirname, '..'));
const baseUrl = flags['database-url'] ?? process.env.HCM_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const N = Number(flags.n ?? 200);
const schema = `pickup_${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'hcm-pickup-'));
writeFileSync(join(dir, 'pickup.yaml'), intakeYaml('pickup'));
const port = 20000 + Math.floor(Math.random() * 20000);
const admin = 'pickup-admin';
const child = spawn(
  process.execPath,
  [join(root, 'bin', 'hcm-runner.js'), 'serve', '--dir', dir, '--port', String(port), '--database-url', `${baseUrl}?schema=${schema}`],
  {
    env: { ...process.env, HCM_RUNNER_FROM_SOURCE: '1', HCM_RUNNER_ADMIN_TOKEN: admin, HCM_RUNNER_SECRET: 'pickup', HCM_RUNNER_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  },
);
const base = `http://127.0.0.1:${port}`;
const api = async (path: string) => (await fetch(`${base}/api${path}`, { headers: { authorization: `Bearer ${admin}` } })).json() as Promise<any>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200) break;
    if (i > 600) throw new Error('the runner did not start');
    await sleep(100);
  }
  const live = (await api('/integrations/pickup')).webhookUrls.live as string;
  const ids: string[] = [];
  for (let i = 0; i < N + 20; i++) {
    const res = await fetch(live, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ workerId: i }) });
    const { executionId } = (await res.json()) as { executionId: string };
    if (i >= 20) ids.push(executionId); // the first ones warm up
    await sleep(20);
  }
  await sleep(1500);
  const waits: number[] = [];
  for (const id of ids) {
    const r = await api(`/executions/${id}`);
    if (r.startedAt) waits.push(Date.parse(r.startedAt) - Date.parse(r.queuedAt));
  }
  waits.sort((a, b) => a - b);
  const q = (p: number) => waits[Math.min(waits.length - 1, Math.floor(p * waits.length))];
  console.log(JSON.stringify({ root, n: waits.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: waits.at(-1) }));
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
  const c = new pg.Client({ connectionString: baseUrl });
  await c.connect();
  await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; DROP SCHEMA IF EXISTS "${schema}_boss" CASCADE`);
  await c.end();
}
