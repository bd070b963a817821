/**
 * Groups and switches (docs/authoring.md "Control flow"): the stand-in declarations their compiled
 * steps carry in place of an action, and the walks over nested steps — raw (before compile: the
 * step count and the file-wide index of ids) and compiled (everyone who looks into every step).
 */
import type { ActionDeclaration } from '../connectors/types.js';
import type { CompiledIntegration, CompiledStep } from './types.js';
import { joinPointer } from './yaml-source.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** What a group's step record shows as its `action` (it calls none). */
export const GROUP_ACTION: ActionDeclaration = { key: 'group', name: 'Group', group: 'control', description: 'Runs its steps.', inputs: {} };
export const SWITCH_ACTION: ActionDeclaration = {
  key: 'switch',
  name: 'Switch',
  group: 'control',
  description: 'Runs the first matching case.',
  inputs: {},
};

/** Whether a compiled step is a group or a switch (its `action` is a stand-in). */
export function isBlockStep(step: CompiledStep): boolean {
  return step.steps !== undefined || step.switch !== undefined;
}

/** The step lists directly inside a raw step: a group's steps, each case's steps, a switch's default. */
export function rawInnerLists(raw: Obj, at: string): Array<{ list: unknown[]; pointer: string }> {
  const out: Array<{ list: unknown[]; pointer: string }> = [];
  if (Array.isArray(raw.steps)) out.push({ list: raw.steps, pointer: joinPointer(at, 'steps') });
  const sw = raw.switch;
  if (isObj(sw)) {
    if (Array.isArray(sw.cases))
      sw.cases.forEach((c, i) => {
        if (isObj(c) && Array.isArray(c.steps)) out.push({ list: c.steps, pointer: joinPointer(at, 'switch', 'cases', i, 'steps') });
      });
    if (Array.isArray(sw.default)) out.push({ list: sw.default, pointer: joinPointer(at, 'switch', 'default') });
  }
  return out;
}

/** The top-level step lists of a raw document, in file order: trigger lists, steps, onFailure. */
export function rawTopLists(doc: Obj): Array<{ list: unknown; pointer: string; what: string }> {
  const trigger = isObj(doc.trigger) ? doc.trigger : {};
  return [
    { list: trigger.subscribe, pointer: '/trigger/subscribe', what: 'trigger.subscribe' },
    { list: trigger.unsubscribe, pointer: '/trigger/unsubscribe', what: 'trigger.unsubscribe' },
    { list: doc.steps, pointer: '/steps', what: 'steps' },
    { list: doc.onFailure, pointer: '/onFailure', what: 'onFailure' },
  ];
}

/**
 * The pointer of the step past `max` in a top-level list, nested steps counted (depth first, in
 * file order), or undefined. Stops at the limit, so a deep or huge file costs at most `max` visits.
 */
export function stepPastLimit(list: unknown, pointer: string, max: number): { pointer: string; counted: number } | undefined {
  if (!Array.isArray(list)) return undefined;
  let count = 0;
  let past: string | undefined;
  const walk = (items: unknown[], at: string): void => {
    for (let i = 0; i < items.length && past === undefined; i++) {
      const raw = items[i];
      if (++count > max) {
        past = joinPointer(at, i);
        return;
      }
      if (isObj(raw)) for (const inner of rawInnerLists(raw, joinPointer(at, i))) walk(inner.list, inner.pointer);
    }
  };
  walk(list, pointer);
  if (past === undefined) return undefined;
  return { pointer: past, counted: countAll(list) };
}

/** Every step of a list, nested ones included (only called on lists already known to be bounded by the file size). */
function countAll(list: unknown[]): number {
  let n = 0;
  const stack: unknown[][] = [list];
  while (stack.length) {
    for (const raw of stack.pop()!) {
      n++;
      if (isObj(raw)) for (const inner of rawInnerLists(raw, '')) stack.push(inner.list);
    }
  }
  return n;
}

/** A step as the file-wide index knows it: where it is and the blocks around it, outermost first. */
export interface IndexedStep {
  id: string;
  pointer: string;
  /** The top-level list it belongs to (`steps`, `onFailure`, `trigger.subscribe` …). */
  list: string;
  /** Its enclosing groups and switches, outermost first. */
  blocks: Array<{ id: string; forEach: boolean; kind: 'group' | 'switch' }>;
}

/** Every step id of the file with where it is; `duplicates` are the later uses of an id (step ids are unique in the whole file). */
export function indexSteps(doc: Obj): { byId: Map<string, IndexedStep>; duplicates: Array<{ step: IndexedStep; first: IndexedStep }> } {
  const byId = new Map<string, IndexedStep>();
  const duplicates: Array<{ step: IndexedStep; first: IndexedStep }> = [];
  const walk = (list: unknown[], at: string, what: string, blocks: IndexedStep['blocks']): void => {
    list.forEach((raw, i) => {
      if (!isObj(raw)) return;
      const pointer = joinPointer(at, i);
      const id = typeof raw.id === 'string' ? raw.id : undefined;
      if (id !== undefined) {
        const step: IndexedStep = { id, pointer, list: what, blocks };
        const first = byId.get(id);
        if (first) duplicates.push({ step, first });
        else byId.set(id, step);
      }
      const inner = rawInnerLists(raw, pointer);
      if (inner.length && id !== undefined) {
        const here = [
          ...blocks,
          { id, forEach: raw.forEach !== undefined, kind: raw.switch !== undefined ? ('switch' as const) : ('group' as const) },
        ];
        for (const l of inner) walk(l.list, l.pointer, what, here);
      }
    });
  };
  for (const { list, pointer, what } of rawTopLists(doc)) if (Array.isArray(list)) walk(list, pointer, what, []);
  return { byId, duplicates };
}

/** Calls `visit` on every compiled step of the list, nested ones included (depth first, in order). */
export function forEachStep(steps: readonly CompiledStep[], visit: (step: CompiledStep) => void): void {
  for (const s of steps) {
    visit(s);
    if (s.steps) forEachStep(s.steps, visit);
    if (s.switch) {
      for (const c of s.switch.cases) forEachStep(c.steps, visit);
      if (s.switch.default) forEachStep(s.switch.default, visit);
    }
  }
}

/** Every compiled step of an integration's `steps` and `onFailure`, nested ones included. */
export function allSteps(integration: CompiledIntegration): CompiledStep[] {
  const out: CompiledStep[] = [];
  forEachStep(integration.steps, (s) => out.push(s));
  if (integration.onFailure) forEachStep(integration.onFailure, (s) => out.push(s));
  return out;
}
