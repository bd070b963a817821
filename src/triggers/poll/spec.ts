/**
 * The poll trigger's spec: timing keys, the action it calls, how items and their identity are
 * read, and the compile step. Spec-only: imports nothing that runs (see definition/spec.ts).
 */
import type { CompiledStep, CompiledTrigger } from '../../definition/types.js';
import { defaultOf, enumValue, numberValue, type TriggerSpec } from '../../definition/spec.js';
import { compileTiming, timingOptions } from '../schedule/timing-spec.js';

type Poll = Extract<CompiledTrigger, { type: 'poll' }>;

const options = {
  ...timingOptions,
  action: { schema: { $ref: '#/$defs/step/properties/action' } },
  connection: { schema: { type: 'string' } },
  inputs: { schema: { $ref: '#/$defs/step/properties/inputs' } },
  items: { schema: { $ref: '#/$defs/expression' }, default: '{% data %}', description: "The items of the poll's results." },
  key: { schema: { $ref: '#/$defs/expression' }, description: 'Identity of an item, e.g. {% id %}.' },
  mode: {
    schema: { enum: ['batch', 'each'] },
    default: 'batch',
    description: 'batch: one execution per poll with all new items; each: one execution per new item.',
  },
  maxSeen: { schema: { type: 'integer', minimum: 100, maximum: 1_000_000 }, default: 10_000, description: 'How many seen keys are kept.' },
} as const;

export const pollSpec: TriggerSpec<Poll> = {
  type: 'poll',
  description: 'Calls an action on a timer and starts executions for items it has not seen before.',
  docs: 'docs/triggers.md#poll',
  required: ['action', 'key'],
  options,
  compile(raw, ctx) {
    const step = ctx.step({ id: 'poll', action: raw.action, connection: raw.connection, inputs: raw.inputs }, '/trigger', 'poll');
    if (step) ctx.checkReferences(step, []);
    return {
      type: 'poll',
      ...compileTiming(raw, ctx),
      step: step ?? ({ id: 'poll' } as CompiledStep),
      items: ctx.template(raw.items ?? defaultOf(options, 'items'), '/trigger/items'),
      key: ctx.template(raw.key, '/trigger/key'),
      mode: enumValue(raw, options, 'mode'),
      maxSeen: numberValue(raw, options, 'maxSeen'),
    };
  },
};
