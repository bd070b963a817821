/**
 * Prometheus metrics. One registry per server (not prom-client's global) so several servers can
 * live in one process (tests, benchmarks). Labels are bounded: route patterns, never raw paths.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ExecutionRecord } from '../engine/record.js';
import type { Runtime } from '../runtime/runtime.js';
import type { TriggerHealth } from '../runtime/trigger-health.js';

export interface Metrics {
  registry: Registry;
  requests: Counter<'route' | 'method' | 'status'>;
  /** Failed admin-token checks: `surface` sign-in or admin-api, `reason` wrong_token or locked_out (src/server/auth-throttle.ts). */
  authFailures: Counter<'surface' | 'reason'>;
  render(): Promise<string>;
}

export function createMetrics(runtime: Runtime): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'hcm_runner_' });
  const requests = new Counter({
    name: 'hcm_runner_http_requests_total',
    help: 'HTTP requests by route pattern, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const authFailures = new Counter({
    name: 'hcm_runner_auth_failures_total',
    help: 'Refused admin tokens by surface (sign-in, admin-api) and reason (wrong_token; locked_out: refused unchecked during a lockout)',
    labelNames: ['surface', 'reason'] as const,
    registers: [registry],
  });
  const executions = new Counter({
    name: 'hcm_runner_executions_total',
    help: 'Finished executions by integration and status',
    labelNames: ['integration', 'status'] as const,
    registers: [registry],
  });
  const started = new Counter({
    name: 'hcm_runner_executions_started_total',
    help: 'Executions started (including resumed attempts) by integration',
    labelNames: ['integration'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'hcm_runner_queue_depth',
    help: 'Executions queued and not yet running (cluster-wide on PostgreSQL)',
    registers: [registry],
    collect() {
      this.set(runtime.dispatcher.depth);
    },
  });
  new Gauge({
    name: 'hcm_runner_executions_running',
    help: 'Executions running in this process',
    registers: [registry],
    collect() {
      this.set(runtime.dispatcher.runningCount);
    },
  });
  // Waiting executions (core.wait) hold no worker, so no in-process count sees them: read from
  // the store at each scrape (cluster-wide), one indexed count per loaded integration.
  new Gauge({
    name: 'hcm_runner_executions_waiting',
    help: 'Executions waiting (core.wait: for a time or a callback) by integration, cluster-wide',
    labelNames: ['integration'] as const,
    registers: [registry],
    async collect() {
      const names = runtime.registry.integrations().map((i) => i.name);
      // An unreadable store leaves the series out rather than failing the whole scrape.
      const counts = await Promise.all(names.map(async (n) => [n, await runtime.store.countWaiting(n).catch(() => undefined)] as const));
      this.reset();
      for (const [integration, n] of counts) if (n !== undefined) this.set({ integration }, n);
    },
  });
  // Trigger health of schedules and polls (runtime/trigger-health.ts), read at each scrape from
  // the store, so every replica reports the same cluster-wide values.
  const healthOfAll = async () => {
    const names = runtime.registry
      .integrations()
      .map((i) => i.name)
      .filter((n) => runtime.triggers.hasHealth(n));
    // An unreadable store leaves the series out rather than failing the whole scrape.
    const all = await Promise.all(names.map(async (n) => [n, await runtime.triggerHealth(n).catch(() => undefined)] as const));
    return all.filter((e): e is readonly [string, TriggerHealth] => !!e[1]);
  };
  new Gauge({
    name: 'hcm_runner_trigger_last_success_timestamp_seconds',
    help: 'Schedules and polls: Unix time of the last successful run (absent until the first)',
    labelNames: ['integration'] as const,
    registers: [registry],
    async collect() {
      const all = await healthOfAll();
      this.reset();
      for (const [integration, h] of all) if (h.lastSuccessAt) this.set({ integration }, Date.parse(h.lastSuccessAt) / 1000);
    },
  });
  new Gauge({
    name: 'hcm_runner_trigger_consecutive_failures',
    help: 'Schedules and polls: runs in a row that failed (0 after a success)',
    labelNames: ['integration'] as const,
    registers: [registry],
    async collect() {
      const all = await healthOfAll();
      this.reset();
      for (const [integration, h] of all) this.set({ integration }, h.consecutiveFailures);
    },
  });
  const steps = new Histogram({
    name: 'hcm_runner_step_duration_seconds',
    help: 'Step durations by action and status',
    labelNames: ['action', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  runtime.dispatcher.on('started', (job) => started.inc({ integration: job.integration }));
  runtime.dispatcher.on('finished', (record: ExecutionRecord) => {
    executions.inc({ integration: record.integration, status: record.status });
    for (const s of record.steps) if (s.durationMs !== undefined) steps.observe({ action: s.action, status: s.status }, s.durationMs / 1000);
  });
  return { registry, requests, authFailures, render: () => registry.metrics() };
}
