/**
 * `hcm-runner validate` loads the definition layer only: the trigger types' definition-time parts
 * (spec, facts) but none of their run-time parts, which the types import on first use
 * (`start`, `testing`: dynamic imports in src/triggers/<type>/type.ts). Checked on the graph of
 * what importing a module loads (import-graph.ts): static imports that bring values.
 */
import { describe, expect, it } from 'vitest';
import { importGraph, reachable } from './import-graph.js';

/** Folders validate must never load: the process runtime, servers, storage, the engine, HTTP calls. */
const RUNTIME_FOLDERS = ['runtime/', 'server/', 'console/', 'store/', 'engine/', 'sandbox/', 'connectors/http/', 'connectors/hcm/oauth/'];

/**
 * What a trigger's run-time part may share with validate: the definition layer, the action
 * declarations, the keys every connection has (its limits) and the plain value types.
 */
const SHARED = /^(common|definition)\/|^settings\/spec\.ts$|^connectors\/(catalog\.ts|connection-limits\.ts|[^/]+\/declarations)/;

describe('validate stays light', () => {
  const all = importGraph('all');
  const loaded = importGraph('loaded');
  const validate = reachable(loaded, 'cli/validate.ts');

  // The modules the trigger types load lazily, and everything those load.
  const lazyTargets = [...all.entries()]
    .filter(([m]) => /^triggers\/[^/]+\/type\.ts$/.test(m))
    .flatMap(([m, targets]) => targets.filter((t) => !loaded.get(m)!.includes(t)));
  const lazyParts = new Set(lazyTargets.flatMap((t) => [...reachable(loaded, t)]));

  it('loads the definition-time part of every trigger type', () => {
    for (const type of ['webhook', 'schedule', 'poll', 'app-event']) expect(validate).toContain(`triggers/${type}/type.ts`);
  });

  it('the trigger types have run-time parts loaded on first use', () => {
    for (const part of ['triggers/schedule/start.ts', 'triggers/poll/start.ts', 'triggers/app-event/start.ts', 'triggers/webhook/test-case.ts'])
      expect(lazyTargets).toContain(part);
  });

  it('loads none of the runtime folders', () => {
    expect([...validate].filter((m) => RUNTIME_FOLDERS.some((f) => m.startsWith(f)))).toEqual([]);
  });

  it("loads none of the triggers' run-time parts", () => {
    expect([...validate].filter((m) => lazyParts.has(m) && !SHARED.test(m))).toEqual([]);
  });
});
