/**
 * The schedule trigger type (src/triggers/type.ts): `$trigger` is the tick (`scheduledAt`,
 * `firedAt`); at run time one tick loop per enabled integration (`start.ts`). `timingSummary`
 * and `timingLabels` are shared with poll, which runs on the same timing keys.
 */
import type { CompiledTrigger, ScheduleTiming } from '../../definition/types.js';
import type { TriggerTesting, TriggerType } from '../type.js';
import { scheduleSpec } from './spec.js';

type Schedule = Extract<CompiledTrigger, { type: 'schedule' }>;

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The timing keys as a person reads them (`every` back in its unit). */
export function timingSummary(t: ScheduleTiming): Record<string, unknown> {
  return {
    ...(t.every !== undefined ? { every: formatEvery(t.every) } : {}),
    ...(t.cron ? { cron: t.cron } : {}),
    ...(t.at ? { at: t.at } : {}),
    timezone: t.timezone,
  };
}

export const timingLabels = { every: 'Every', cron: 'Cron', at: 'At', timezone: 'Time zone' };

function formatEvery(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

const testing: TriggerTesting<Schedule> = {
  caseTrigger: (_i, _t, input, { now }) => {
    const scheduledAt = input.scheduledAt ?? now.toISOString();
    return { scheduledAt, firedAt: input.firedAt ?? scheduledAt };
  },
  recordedInput: (_t, d) => ({ scheduledAt: d.scheduledAt, ...(d.firedAt !== d.scheduledAt && d.firedAt ? { firedAt: d.firedAt } : {}) }),
};

export const scheduleTrigger: TriggerType<Schedule> = {
  spec: scheduleSpec,
  // overlap skip/queue: one execution at a time (the dispatcher queues the rest).
  concurrency: (t) => (t.overlap !== 'allow' ? 1 : undefined),
  evaluates: () => ({ values: [], steps: [] }),
  /** The current tick; an object payload is merged in. */
  manualTrigger: (_t, payload, { now }) => ({ scheduledAt: now, firedAt: now, ...(isObject(payload) ? payload : {}) }),
  summary: (t) => ({ ...timingSummary(t), overlap: t.overlap }),
  console: {
    runHelp: 'Runs the integration now as a test execution; a JSON object payload is merged into $trigger (next to scheduledAt and firedAt).',
    labels: { ...timingLabels, overlap: 'Overlap' },
  },
  caseKeys: () => ({ keys: ['scheduledAt', 'firedAt'], what: 'a schedule trigger' }),
  testing: async () => testing,
  start: () => import('./start.js').then((m) => m.startSchedules),
};
