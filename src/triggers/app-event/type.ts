/**
 * The appEvent trigger type (src/triggers/type.ts): events arrive like webhooks (`webhookLike`);
 * at run time its subscribe/unsubscribe steps follow the integration's lifecycle (`start.ts`).
 */
import type { CompiledTrigger } from '../../definition/types.js';
import type { TriggerType } from '../type.js';
import { webhookLike } from '../webhook/type.js';
import { appEventSpec } from './spec.js';

type AppEvent = Extract<CompiledTrigger, { type: 'appEvent' }>;

export const appEventTrigger: TriggerType<AppEvent> = {
  spec: appEventSpec,
  ...webhookLike,
  evaluates: (t) => ({ values: webhookLike.evaluates(t).values, steps: [...t.subscribe, ...t.unsubscribe] }),
  console: {
    runHelp: 'Runs the integration now as a test execution; the JSON payload is the event body ($trigger.body.data).',
    labels: webhookLike.labels,
  },
  start: () => import('./start.js').then((m) => m.startAppEvents),
};
