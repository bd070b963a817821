/**
 * The appEvent trigger's spec: subscribe/unsubscribe step lists plus the webhook keys (events
 * arrive like webhooks). Spec-only: imports nothing that runs (see definition/spec.ts).
 */
import type { CompiledTrigger } from '../../definition/types.js';
import type { TriggerSpec } from '../../definition/spec.js';
import { compileWebhookOptions, webhookOptions } from '../webhook/spec.js';

type AppEvent = Extract<CompiledTrigger, { type: 'appEvent' }>;

export const appEventSpec: TriggerSpec<AppEvent> = {
  type: 'appEvent',
  description: 'Subscribes to events of a third party when enabled (its steps), receives them like a webhook, unsubscribes when disabled.',
  docs: 'docs/triggers.md#appevent',
  options: {
    subscribe: { schema: { type: 'array', items: { $ref: '#/$defs/step' } }, description: 'Steps run when the integration becomes enabled.' },
    unsubscribe: { schema: { type: 'array', items: { $ref: '#/$defs/step' } }, description: 'Steps run when it is disabled or removed.' },
    ...webhookOptions,
  },
  compile: (raw, ctx) => ({
    type: 'appEvent',
    ...compileWebhookOptions(raw, ctx),
    subscribe: ctx.stepList(raw.subscribe, '/trigger/subscribe', 'trigger.subscribe'),
    unsubscribe: ctx.stepList(raw.unsubscribe, '/trigger/unsubscribe', 'trigger.unsubscribe'),
  }),
};
