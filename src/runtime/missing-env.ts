/**
 * `validate` ignores `env` values (CI has no secrets; docs/authoring.md "Values") but `serve` reports
 * a missing one as that integration's error (docs/server.md "Integration status"). The integration stays loaded (the value may only matter for
 * some steps); GET /api/integrations shows status "error" with one problem per missing variable.
 */
import { readFileSync } from 'node:fs';
import { forEachStep } from '../definition/control-flow.js';
import type { CompiledIntegration, CompiledStep, Problem, ValueTemplate } from '../definition/types.js';
import { triggerTypeOf } from '../triggers/registry.js';

const cache = new WeakMap<CompiledIntegration, Array<{ name: string; pointer: string }>>();

export function missingEnvProblems(integration: CompiledIntegration, env: NodeJS.ProcessEnv): Problem[] {
  let refs = cache.get(integration);
  if (!refs) {
    refs = [];
    collectIntegration(integration, refs);
    cache.set(integration, refs);
  }
  const missing = refs.filter((r) => env[r.name] === undefined);
  if (missing.length === 0) return [];
  let lines: string[] = [];
  try {
    lines = readFileSync(integration.file, 'utf8').split('\n');
  } catch {
    // positions fall back to 1:1
  }
  return missing.map((r) => {
    const line = lines.findIndex((l) => new RegExp(`\\benv\\b[^#]*\\b${r.name}\\b|^\\s*env:\\s*${r.name}\\s*$`).test(l));
    const column = line >= 0 ? lines[line]!.indexOf(r.name) + 1 : 1;
    return {
      file: integration.file,
      line: line + 1 || 1,
      column: column || 1,
      message: `environment variable ${r.name} is not set and has no default; set it where the runner runs or add a default`,
      path: r.pointer,
    };
  });
}

function collectIntegration(i: CompiledIntegration, out: Array<{ name: string; pointer: string }>): void {
  collect(i.config, out);
  for (const c of Object.values(i.connections)) collect(c.config, out);
  const steps = (list: CompiledStep[]) =>
    forEachStep(list, (s) => {
      for (const t of [s.inputs, s.if, s.forEach]) if (t) collect(t, out);
      for (const c of s.switch?.cases ?? []) collect(c.when, out);
    });
  steps(i.steps);
  if (i.onFailure) steps(i.onFailure);
  const trigger = triggerTypeOf(i.trigger).evaluates(i.trigger);
  for (const v of trigger.values) collect(v, out);
  steps(trigger.steps);
}

function collect(t: ValueTemplate, out: Array<{ name: string; pointer: string }>): void {
  switch (t.kind) {
    case 'env':
      if (!t.hasDefault && !out.some((o) => o.name === t.name)) out.push({ name: t.name, pointer: t.pointer });
      return;
    case 'object':
      for (const [, v] of t.entries) collect(v, out);
      return;
    case 'array':
      for (const v of t.items) collect(v, out);
      return;
    default:
      return;
  }
}
