/** The JSON shapes of GET /api/integrations (a contract: docs/server.md "Routes"). */
import type { Runtime } from '../runtime/runtime.js';
import type { RegistryEntry } from '../runtime/registry.js';
import { missingEnvProblems } from '../runtime/missing-env.js';
import type { TriggerHealth } from '../runtime/trigger-health.js';
import { acceptsWebhooks } from '../triggers/registry.js';

export interface IntegrationView {
  name: string;
  file: string;
  enabled: boolean;
  status: 'ok' | 'error';
  errors?: Array<{ file: string; line: number; column: number; message: string; path: string }>;
  /** The list has `{type}`; GET /api/integrations/{name} adds the trigger's settings (methods, every …). */
  trigger: { type: string; [setting: string]: unknown };
  webhookUrls?: { live: string; test: string };
  /** Schedules and polls, GET /api/integrations/{name} only (runtime/trigger-health.ts). */
  health?: TriggerHealth;
  [extra: string]: unknown;
}

export function integrationView(runtime: Runtime, e: RegistryEntry): IntegrationView {
  const i = e.integration;
  const problems = i && e.problems.length === 0 ? missingEnvProblems(i, runtime.env) : e.problems;
  const view: IntegrationView = {
    name: e.name,
    file: e.file,
    enabled: i?.enabled ?? e.header?.enabled ?? true,
    status: problems.length > 0 ? 'error' : 'ok',
    trigger: { type: i?.trigger.type ?? e.header?.triggerType ?? 'unknown' },
  };
  if (problems.length > 0) view.errors = problems.map((p) => ({ file: p.file, line: p.line, column: p.column, message: p.message, path: p.path }));
  if (i && acceptsWebhooks(i)) {
    const urls = runtime.webhookUrls(i.name);
    if (urls) view.webhookUrls = urls;
  }
  return view;
}
