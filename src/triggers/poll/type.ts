/**
 * The poll trigger type (src/triggers/type.ts): `$trigger` holds the new items (all of them in
 * batch mode, one in each mode); at run time one poll loop per enabled integration (`start.ts`).
 */
import type { CompiledTrigger } from '../../definition/types.js';
import { timingLabels, timingSummary } from '../schedule/type.js';
import type { TriggerTesting, TriggerType } from '../type.js';
import { pollSpec } from './spec.js';

type Poll = Extract<CompiledTrigger, { type: 'poll' }>;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

const testing: TriggerTesting<Poll> = {
  caseTrigger: (_i, t, input, { now }) => {
    const polledAt = now.toISOString();
    if (t.mode === 'each') return { item: 'item' in input ? input.item : input.items?.[0], polledAt };
    return { items: input.items ?? [], polledAt };
  },
  recordedInput: (t, d) =>
    t.mode === 'each' ? { item: d.item ?? (Array.isArray(d.items) ? d.items[0] : null) } : { items: Array.isArray(d.items) ? d.items : [] },
};

export const pollTrigger: TriggerType<Poll> = {
  spec: pollSpec,
  // The poll's own step runs with the integration's config and connections.
  evaluates: (t) => ({ values: [], steps: t.step?.inputs ? [t.step] : [] }),
  /** The payload as the new items: an array, `{items: [...]}`, or one item. */
  manualTrigger: (t, payload, { now }) => {
    const items = Array.isArray(payload)
      ? payload
      : isObject(payload) && Array.isArray(payload.items)
        ? payload.items
        : payload === undefined
          ? []
          : [payload];
    return t.mode === 'each' ? { item: items[0], items, polledAt: now } : { items, polledAt: now };
  },
  summary: (t) => ({ ...timingSummary(t), mode: t.mode }),
  console: {
    runHelp: 'Runs the integration now as a test execution; the JSON payload is the items (an array, or {"items": [...]}).',
    labels: { ...timingLabels, mode: 'Mode' },
  },
  caseKeys: (t) => ({
    keys: t.mode === 'each' ? ['item', 'items'] : ['items'],
    what: `a poll in ${t.mode} mode`,
    problems: (input) =>
      t.mode === 'each' && Array.isArray(input.items) && input.items.length !== 1
        ? [{ key: 'items', message: 'a poll in each mode runs one execution per item: give the one item as trigger.item (one case per item)' }]
        : [],
  }),
  testing: async () => testing,
  start: () => import('./start.js').then((m) => m.startPolls),
};
