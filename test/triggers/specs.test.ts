/**
 * Each spec's defaults are what compile applies — the one place they are written. A trigger file
 * with no optional key compiles to exactly the defaults its spec declares (and that the generated
 * schema shows editors); change a default in compile alone and this fails.
 */
import { describe, expect, it } from 'vitest';
import { loadText } from '../../src/definition/load.js';
import { retryOptions, stepOptions } from '../../src/definition/file-spec.js';
import type { OptionSpec } from '../../src/definition/spec.js';
import { triggerSpecs } from '../../src/triggers/registry.js';
import { hmacOptions, responseOptions } from '../../src/triggers/webhook/spec.js';
import { buildIntegrationSchema, triggerDefName } from '../../src/definition/integration-schema.js';
import { readFileSync } from 'node:fs';
import { renderTriggerDocs, triggerDocsPath } from '../../src/triggers/docs.js';

const step = '{ id: a, action: core.log, inputs: { message: x } }';
/** The least each trigger type needs. */
const minimal: Record<string, string> = {
  webhook: '{ type: webhook }',
  schedule: '{ type: schedule, every: 5m }',
  poll: "{ type: poll, every: 5m, action: core.transform, inputs: { value: [] }, key: '{% id %}' }",
  appEvent: '{ type: appEvent }',
  call: '{ type: call }',
};

function compiled(trigger: string, stepText = step): any {
  const r = loadText('x.yaml', `name: t\ntrigger: ${trigger}\nsteps: [${stepText}]\n`);
  expect(r.problems).toEqual([]);
  return r.integration!;
}

/** A compiled value as it was written: templates back to their literal or `{% source %}`. */
function plain(v: any): unknown {
  if (v && typeof v === 'object' && v.kind === 'expr') return `{% ${v.source} %}`;
  if (v && typeof v === 'object' && v.kind === 'literal') return v.value;
  return v;
}

const withDefaults = (options: Readonly<Record<string, OptionSpec>>) => Object.entries(options).filter(([, o]) => o.default !== undefined);

describe('trigger specs', () => {
  it('cover every trigger type compile knows, each with a minimal example here', () => {
    expect(triggerSpecs.map((s) => s.type).sort()).toEqual(Object.keys(minimal).sort());
  });

  for (const spec of triggerSpecs) {
    it(`${spec.type}: compile applies the spec's defaults`, () => {
      const t = compiled(minimal[spec.type]!).trigger;
      const checked = withDefaults(spec.options).filter(([k]) => k in t);
      // A type without defaults (call) has nothing to apply.
      if (withDefaults(spec.options).length > 0) expect(checked.length).toBeGreaterThan(0);
      for (const [k, o] of checked) expect(plain(t[k]), `${spec.type}.${k}`).toEqual(o.default);
    });

    it(`${spec.type}: the generated schema shows the same defaults`, () => {
      const props = (buildIntegrationSchema().$defs as any)[triggerDefName(spec.type)].properties;
      for (const [k, o] of withDefaults(spec.options)) expect(props[k].default, `${spec.type}.${k}`).toEqual(o.default);
    });
  }

  it('webhook hmac and sync response: compile applies the spec defaults', () => {
    const t = compiled('{ type: webhook, hmac: { secret: s }, response: { mode: sync } }').trigger;
    for (const [k, o] of withDefaults(hmacOptions)) expect(t.hmac[k], `hmac.${k}`).toEqual(o.default);
    expect(t.response.timeoutMs).toBe(responseOptions.timeoutMs!.default);
  });

  it('a step: retry and onError defaults come from the file spec', () => {
    const s = compiled(minimal.webhook!, '{ id: a, action: core.log, inputs: { message: x }, retry: {} }').steps[0];
    for (const [k, o] of withDefaults(retryOptions)) expect(s.retry[k], `retry.${k}`).toEqual(o.default);
    expect(s.onError).toBe(stepOptions.onError!.default);
  });
});

describe('docs/triggers.md', () => {
  it('carries the current generated trigger reference (run `npm run docs` when this fails)', () => {
    const current = readFileSync(triggerDocsPath, 'utf8');
    expect(current === renderTriggerDocs(current), 'docs/triggers.md is stale: run `npm run docs`').toBe(true);
    for (const spec of triggerSpecs) expect(current).toContain(`### \`type: ${spec.type}\``);
  });
});
