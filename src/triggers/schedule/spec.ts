/** The schedule trigger's spec: its keys, defaults and compile step (definition/spec.ts). */
import type { CompiledTrigger } from '../../definition/types.js';
import { enumValue, type TriggerSpec } from '../../definition/spec.js';
import { compileTiming, timingOptions } from './timing-spec.js';

type Schedule = Extract<CompiledTrigger, { type: 'schedule' }>;

const options = {
  ...timingOptions,
  overlap: { schema: { enum: ['skip', 'queue', 'allow'] }, default: 'skip', description: 'When the previous run is still going.' },
  catchUp: {
    schema: { enum: ['none', 'latest'] },
    default: 'none',
    description: 'latest: run once for the latest tick missed while the runner was down.',
  },
} as const;

export const scheduleSpec: TriggerSpec<Schedule> = {
  type: 'schedule',
  description: 'Runs on a timer: every N, a cron expression or a time of day, in a time zone.',
  docs: 'docs/triggers.md#schedule',
  options,
  compile(raw, ctx) {
    return {
      type: 'schedule',
      ...compileTiming(raw, ctx),
      overlap: enumValue(raw, options, 'overlap'),
      catchUp: enumValue(raw, options, 'catchUp'),
    };
  },
};
