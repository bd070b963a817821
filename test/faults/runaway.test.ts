/**
 * Expressions that cannot take the process down, against a real `hcm-runner serve` child: the
 * reproductions of $sort (100k numbers in a 589 KB payload), $distinct (60k items), $pad('', 1e8)
 * and an expression that allocates far more than its input. /healthz answers within a generous
 * bound throughout (polled concurrently); each attacked execution ends — quickly, succeeded with
 * the right answer, or failed naming integration, step and the limit — and another integration
 * keeps working. The process never dies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.js';
import { ADMIN, poll, root, tempDir } from '../server/helpers.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'runaway');
let child: ChildProcess;
let output = '';
let base = '';
const data = tempDir('hcm-runaway-data-');
const urls: Record<string, string> = {};

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, [join(root, 'bin', 'hcm-runner.js'), 'serve', '--dir', dir, '--port', String(port), '--data', data.path], {
    cwd: root,
    env: { ...process.env, HCM_RUNNER_ADMIN_TOKEN: ADMIN, HCM_RUNNER_LOG_LEVEL: 'warn', HCM_RUNNER_PUBLIC_URL: base },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await poll(async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined), 30_000, 100).catch((err) => {
    throw new Error(`${(err as Error).message}\n${output}`);
  });
  const res = await fetch(`${base}/api/integrations`, { headers: { authorization: `Bearer ${ADMIN}` } });
  for (const i of (await res.json()) as Array<{ name: string; webhookUrls: { live: string } }>) urls[i.name] = i.webhookUrls.live;
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  data.remove();
});

/** Polls /healthz every 50 ms until stopped; reports the slowest answer and any failure. */
function watchHealth(): { stop(): Promise<{ slowestMs: number; failures: string[]; checks: number }> } {
  let running = true;
  let slowestMs = 0;
  let checks = 0;
  const failures: string[] = [];
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) });
        if (res.status !== 200) failures.push(`status ${res.status}`);
        await res.arrayBuffer();
      } catch (err) {
        failures.push((err as Error).message);
      }
      slowestMs = Math.max(slowestMs, performance.now() - t0);
      checks++;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { slowestMs, failures, checks };
    },
  };
}

async function attack(name: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(urls[name]!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

async function execution(id: string): Promise<any> {
  const res = await fetch(`${base}/api/executions/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return res.json();
}

const items = (n: number) => Array.from({ length: n }, (_, i) => ((i * 7919) % 100_003) + Math.random() / 10);

describe('runaway expressions against a running server', () => {
  it('$sort of 100k numbers (589 KB payload) answers the right value; /healthz keeps answering', { timeout: 60_000 }, async () => {
    const list = items(100_000).map(Math.floor);
    expect(JSON.stringify({ items: list }).length).toBeLessThan(600 * 1024);
    const health = watchHealth();
    const r = await attack('sorter', { items: list });
    const h = await health.stop();
    expect(r, JSON.stringify(r.body)).toMatchObject({ status: 200 });
    expect(r.body).toBe(Math.min(...list));
    expect(h.failures).toEqual([]);
    expect(h.slowestMs).toBeLessThan(2000);
  });

  it('$distinct of 60k items answers the right count; /healthz keeps answering', { timeout: 60_000 }, async () => {
    const list = items(60_000).map(Math.floor);
    const health = watchHealth();
    const r = await attack('deduper', { items: list });
    const h = await health.stop();
    expect(r.status).toBe(200);
    expect(r.body).toBe(new Set(list).size);
    expect(h.failures).toEqual([]);
    expect(h.slowestMs).toBeLessThan(2000);
  });

  it.each([
    ['padder', 'pad', { width: 1e8 }, /\$pad width 100000000 is above the limit of 1000000 characters/],
    ['hoarder', 'hoard', {}, /exceeded a guardrail/],
  ])('%s: the step fails naming integration, step and limit; the process lives', { timeout: 60_000 }, async (name, step, body, reason) => {
    const health = watchHealth();
    const r = await attack(name, body);
    const h = await health.stop();
    expect(r, JSON.stringify(r.body)).toMatchObject({ status: 500 });
    expect(r.body.error).toContain(`integration ${name}, step ${step}`);
    expect(r.body.error).toMatch(reason);
    const record = await execution(r.body.executionId);
    expect(record.status).toBe('failed');
    expect(record.error.step).toBe(step);
    expect(record.error.code).toBe('expression');
    expect(h.failures).toEqual([]);
    expect(h.slowestMs).toBeLessThan(2000);
  });

  it('another integration keeps working, and the process never died', async () => {
    const ok = await attack('ok', {});
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ fine: true });
    expect(child.exitCode).toBeNull();
    expect(output).not.toMatch(/heap limit|out of memory/i);
  });
});
